// daemon_client_tool: a client of the settings daemon for the tests, run as another user (setpriv).
//   daemon_client_tool SOCKET [--hold] REQUEST...
// Each REQUEST is a request line without its "wwd1 " (e.g. "set 0 power_limit_w 300"); each reply line is
// printed to stdout as it comes. With --hold it then prints "holding" and waits to be killed, keeping its
// connection (so its settings) open; otherwise it exits, which closes the connection.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/client.hpp"
#include "daemon/protocol.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: daemon_client_tool SOCKET [--hold] REQUEST...\n");
    return 2;
  }
  bool hold = false;
  std::vector<std::string> requests;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--hold") == 0) {
      hold = true;
    } else {
      requests.emplace_back(argv[i]);
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    wattwise::daemon::DaemonClient client(argv[1]);
    for (const auto& text : requests) {
      std::string why;
      const auto request = wattwise::daemon::parse_request("wwd1 " + text, &why);
      if (!request) {
        std::fprintf(stderr, "not a request: %s\n", why.c_str());
        return 2;
      }
      const auto reply = client.ask(*request);
      std::printf("%s", wattwise::daemon::format_reply(reply).c_str());
    }
    if (hold) {
      std::printf("holding\n");
      for (;;) ::pause();
    }
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 3;
  }
  return 0;
}
