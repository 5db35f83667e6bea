// <slurm/spank.h> declares the plugin hooks outside its own extern "C" block, so C++ would give
// them C++ linkage; including it inside one keeps every declaration C, as Slurm looks them up.
#pragma once

extern "C" {
#include <slurm/spank.h>
}
