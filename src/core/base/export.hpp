// Every loadable module is built with -fvisibility=hidden; the symbols its host looks up are
// marked with EXPLSCHED_EXPORT, and the module's linker version script names exactly those.
#pragma once

#define EXPLSCHED_EXPORT __attribute__((visibility("default")))
