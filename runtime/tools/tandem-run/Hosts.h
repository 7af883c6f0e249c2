//===- Hosts.h - where tandem-run places its ranks --------------*- C++ -*-===//
//
// The mpirun arguments that place the ranks and choose the transport: all
// on this machine (shared memory, out-of-band on loopback), or
// --ranks-per-host N on each of --hosts in order, over TCP between hosts
// when any host is another machine (docs/runtime.md, "Starting the ranks").
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_HOSTS_H
#define TANDEM_TOOLS_TANDEM_RUN_HOSTS_H

#include "Options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::run {

/// Parses --hosts: comma-separated host names, each named once. Fails on an
/// empty name, a name with characters other than letters, digits, '.', '-'
/// and '_' (slots such as `h1:4` come from --ranks-per-host), or a repeat.
bool parseHosts(const std::string &text, std::vector<std::string> &hosts,
                std::string &error);

/// Whether `host` is this machine: localhost, a loopback address or its
/// host name.
bool isLocalHost(const std::string &host);

/// The mpirun arguments after `-np ranks` that place the ranks and choose
/// the transport; `allLocal` says whether every rank runs on this machine.
/// Fails, naming the numbers, when --ranks-per-host on the hosts gives
/// fewer slots than `ranks`.
bool placementArguments(const Options &options, int64_t ranks,
                        std::vector<std::string> &arguments, bool &allLocal,
                        std::string &error);

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_HOSTS_H
