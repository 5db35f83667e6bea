/* A hostile client: submits a batch job with a SPANK job environment of its own making, as a user
 * can with libslurm alone (no sbatch, no SPANK plugin to check the --explore options). Each
 * argument is one entry ("NAME=value"); "@N:NAME=C" makes an entry of N copies of the character C,
 * and "#N:NAME=v" N entries "NAME=v". Prints the job id. Used by hostile_rank_crafted_submit.sh. */
#include <slurm/slurm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    size_t cap = 16, n = 0;
    char** env = malloc(cap * sizeof *env);
    if (env == NULL) return 2;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        size_t copies = 1;
        char* entry = NULL;
        if (a[0] == '@' || a[0] == '#') {
            char* rest = NULL;
            const unsigned long count = strtoul(a + 1, &rest, 10);
            if (rest == NULL || *rest != ':') return 2;
            ++rest;
            if (a[0] == '@') {
                const char* eq = strchr(rest, '=');
                if (eq == NULL || eq[1] == '\0') return 2;
                const size_t head = (size_t)(eq - rest) + 1;
                entry = malloc(head + count + 1);
                if (entry == NULL) return 2;
                memcpy(entry, rest, head);
                memset(entry + head, eq[1], count);
                entry[head + count] = '\0';
            } else {
                copies = count;
                entry = strdup(rest);
            }
        } else {
            entry = strdup(a);
        }
        for (size_t c = 0; c < copies; ++c) {
            if (n + 1 >= cap) {
                cap *= 2;
                char** grown = realloc(env, cap * sizeof *env);
                if (grown == NULL) return 2;
                env = grown;
            }
            env[n++] = entry;
        }
    }
    slurm_init(NULL);
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL) strcpy(cwd, "/tmp");
    char* job_env[] = {"PATH=/usr/bin:/bin", NULL};
    desc.name = "crafted";
    desc.script = "#!/bin/sh\ntrue\n";
    desc.work_dir = cwd;
    desc.std_out = "/dev/null";
    desc.environment = job_env;
    desc.env_size = 1;
    desc.user_id = getuid();
    desc.group_id = getgid();
    desc.min_nodes = 1;
    desc.begin_time = time(NULL) + 3600; /* pending: ranked every round */
    desc.spank_job_env = env;
    desc.spank_job_env_size = (uint32_t)n;
    submit_response_msg_t* resp = NULL;
    if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
        fprintf(stderr, "crafted_submit: %s\n", slurm_strerror(slurm_get_errno()));
        return 1;
    }
    printf("%u\n", resp->job_id);
    slurm_free_submit_response_response_msg(resp);
    return 0;
}
