// Run: the one call a plugin's main() makes.
//
//   int main(int argc, char** argv) {
//     MyPlugin plugin;
//     qrm::sdk::PluginServerOptions options;   // or from flags
//     return qrm::sdk::Run(plugin, options);
//   }
//
// Serves and registers the plugin (plugin_server.h) until SIGTERM or SIGINT,
// then stops cleanly (removing its socket) and returns the exit code.
#pragma once

#include "plugins/sdk/plugin_server.h"

namespace qrm::sdk {

// Must be called before the process starts other threads: it blocks SIGTERM
// and SIGINT so that only Run receives them.
int Run(ResourcePlugin& plugin, const PluginServerOptions& options);

// Keeps a plugin's resident memory small; call first in main(), before any thread exists.
// glibc gives every thread that allocates its own malloc arena, and gRPC serves calls on
// several threads, so each thread that ever wrote a checkpoint keeps its own copy of the large
// temporary buffers resident. A plugin's state sits behind one mutex anyway: one arena costs
// no parallelism. A fixed mmap threshold (glibc raises it after every large free otherwise)
// makes serialized checkpoints (~150 KiB with 1,000 containers) mapped and unmapped per write
// instead of staying in the heap.
void TuneMallocForPlugin();

}  // namespace qrm::sdk
