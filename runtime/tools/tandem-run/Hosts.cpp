//===- Hosts.cpp - where tandem-run places its ranks ----------------------===//

#include "Hosts.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

using namespace tandem::run;

bool tandem::run::parseHosts(const std::string &text,
                             std::vector<std::string> &hosts,
                             std::string &error) {
  hosts.clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string host = text.substr(start, comma - start);
    if (host.empty()) {
      error = "--hosts: empty host name in '" + text + "'";
      return false;
    }
    if (host.find(':') != std::string::npos) {
      error = "--hosts: '" + host +
              "' is not a host name (give the slots with --ranks-per-host)";
      return false;
    }
    bool plain = std::all_of(host.begin(), host.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '.' || c == '-' || c == '_';
    });
    if (!plain) {
      error = "--hosts: '" + host +
              "' is not a host name (letters, digits, '.', '-' and '_')";
      return false;
    }
    if (std::find(hosts.begin(), hosts.end(), host) != hosts.end()) {
      error = "--hosts names '" + host + "' twice";
      return false;
    }
    hosts.push_back(host);
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

bool tandem::run::isLocalHost(const std::string &host) {
  if (host == "localhost" || host.rfind("127.", 0) == 0)
    return true;
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 && host == name;
}

bool tandem::run::placementArguments(const Options &o, int64_t ranks,
                                     std::vector<std::string> &arguments,
                                     bool &allLocal, std::string &error) {
  std::vector<std::string> hosts = o.hosts;
  if (hosts.empty())
    hosts.push_back("localhost");
  allLocal = std::all_of(hosts.begin(), hosts.end(), isLocalHost);
  if (o.ranksPerHost == 0) {
    // No layout asked for: every rank here, however many share its cores.
    arguments = {"--oversubscribe"};
  } else {
    uint64_t count = hosts.size();
    // Compared per host, since the product of the two may overflow.
    if (o.ranksPerHost < (static_cast<uint64_t>(ranks) + count - 1) / count) {
      error = "too few slots: " + std::to_string(count) +
              (count == 1 ? " host" : " hosts") + " x --ranks-per-host " +
              std::to_string(o.ranksPerHost) + " = " +
              std::to_string(count * o.ranksPerHost) +
              " slots, but the program has " + std::to_string(ranks) +
              " ranks (raise --ranks-per-host or name more --hosts)";
      return false;
    }
    // The slots are declared, so mpirun refuses to put more than N on a
    // host; ppr fills the hosts in order, so neighbouring stages, which
    // exchange activations every microbatch, mostly share a host.
    std::string per = std::to_string(o.ranksPerHost), list;
    for (const std::string &host : hosts)
      list += (list.empty() ? "" : ",") + host + ":" + per;
    arguments = {"--host", list, "--map-by", "ppr:" + per + ":node"};
  }
  // No binding: a rank's OpenMP/BLAS threads may use any core.
  arguments.insert(arguments.end(), {"--bind-to", "none"});
  // One machine: shared memory and loopback only. Another machine needs
  // TCP between hosts, on the interfaces mpirun picks (or the user's MCA
  // settings, e.g. OMPI_MCA_btl_tcp_if_include).
  if (allLocal)
    arguments.insert(arguments.end(), {"--mca", "btl", "self,vader"});
  // Shared memory without the single-copy mechanism (CMA), which
  // containers often forbid (it needs ptrace rights).
  arguments.insert(arguments.end(),
                   {"--mca", "btl_vader_single_copy_mechanism", "none"});
  if (allLocal)
    arguments.insert(arguments.end(), {"--mca", "oob_tcp_if_include", "lo",
                                       "--mca", "btl_tcp_if_include", "lo"});
  return true;
}
