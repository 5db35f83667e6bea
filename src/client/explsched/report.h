/*
 * ExplSched report client: send a training job's learning curve (step, metric) to explschedd.
 *
 * Link with -lexplsched_report. Every report carries a munge credential of the calling user and
 * is acknowledged only after explschedd committed it to its database. The library never throws
 * and never exits; every function is safe to call from C and C++.
 *
 * Minimal use in a training loop (job id and address come from the environment that the
 * ExplSched SPANK plugin sets in every step of an --explore job):
 *
 *     explsched_report_result res;
 *     if (explsched_report(step, loss, NAN, &res) != EXPLSCHED_REPORT_STORED)
 *         fprintf(stderr, "%s\n", res.message);
 *
 * See explsched(1), section REPORT, for the environment and the meaning of each status.
 */
#ifndef EXPLSCHED_REPORT_H
#define EXPLSCHED_REPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The wire protocol version this library speaks. */
#define EXPLSCHED_REPORT_PROTOCOL 1

typedef enum explsched_report_status {
    EXPLSCHED_REPORT_STORED = 0,    /* stored and committed */
    EXPLSCHED_REPORT_DUPLICATE = 1, /* this step was already stored with this value: fine */
    EXPLSCHED_REPORT_REFUSED = 2,   /* refused for good; see code, message, last_step */
    EXPLSCHED_REPORT_RETRY = 3,     /* the server could not decide now; send it again later */
    EXPLSCHED_REPORT_ERROR = 4      /* local failure: bad argument, no connection, munge */
} explsched_report_status;

typedef struct explsched_report_result {
    int status;         /* an explsched_report_status */
    char code[32];      /* why, for REFUSED/RETRY: "step_behind", "forbidden", ... ("" else) */
    int has_last_step;  /* set with code "step_behind" */
    uint64_t last_step; /* the job's last stored step: resume reporting after it */
    char message[512];  /* "explsched: <what failed>: <why>" for anything but STORED */
} explsched_report_result;

typedef struct explsched_reporter explsched_reporter;

/*
 * Creates a reporter; it connects on first use and keeps the connection.
 * address: "host:port"; NULL: $EXPLSCHED_REPORT_ADDR, else report_host and report_port of the
 *   settings file ($EXPLSCHED_CONF, default /etc/slurm/explschedd.conf), else 127.0.0.1:6828.
 * munge_socket: NULL: $EXPLSCHED_MUNGE_SOCKET, else munge_socket of that settings file, else
 *   libmunge's default socket.
 * Credentials live 60 s and, when $EXPLSCHED_REPORT_UID is set (the SPANK plugin sets it to
 * explschedd's uid, SlurmUser), only that uid may decode them.
 * Returns NULL and writes why into errbuf (if not NULL) on failure.
 */
explsched_reporter* explsched_reporter_open(const char* address, const char* munge_socket, char* errbuf,
                                            size_t errlen);

/*
 * The most seconds one send may take: connecting, sending, the reply and a reconnection together
 * (default 10). Past it the call returns EXPLSCHED_REPORT_ERROR and the training step goes on.
 * (Getting the credential from munged is bounded by libmunge's own timeout.)
 */
void explsched_reporter_set_timeout(explsched_reporter* reporter, double seconds);

/*
 * Sends one report and waits for its reply. throughput is in steps per second; pass NAN or a
 * negative value when not measured. A lost connection is re-established once (with a fresh
 * credential) before giving up. Returns the status, also stored in *result when not NULL.
 */
int explsched_reporter_send(explsched_reporter* reporter, uint32_t job_id, uint64_t step, double metric,
                            double throughput, explsched_report_result* result);

/* Closes the connection and frees the reporter (NULL is fine). */
void explsched_reporter_close(explsched_reporter* reporter);

/* The job to report for: $EXPLSCHED_JOB_ID, else $SLURM_JOB_ID; 0 when neither holds a job id. */
uint32_t explsched_report_job_id(void);

/*
 * One call for a training loop: a process-wide reporter (created on first use from the
 * environment, thread-safe) and the job from explsched_report_job_id().
 */
int explsched_report(uint64_t step, double metric, double throughput, explsched_report_result* result);

/* "stored", "duplicate", "refused", "retry", "error". */
const char* explsched_report_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* EXPLSCHED_REPORT_H */
