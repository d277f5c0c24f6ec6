#include "core/own_children.hpp"

#include <mutex>
#include <set>

namespace wattwise {

namespace {

std::mutex g_own_children_mutex;
std::set<pid_t> g_own_children;

}  // namespace

void register_own_child(pid_t pid) {
  std::lock_guard lock(g_own_children_mutex);
  g_own_children.insert(pid);
}

void unregister_own_child(pid_t pid) {
  std::lock_guard lock(g_own_children_mutex);
  g_own_children.erase(pid);
}

bool is_own_child(pid_t pid) {
  std::lock_guard lock(g_own_children_mutex);
  return g_own_children.count(pid) > 0;
}

}  // namespace wattwise
