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

}  // namespace qrm::sdk
