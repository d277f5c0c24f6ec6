#include "core/thread_name.hpp"

#include <pthread.h>

#include <cstring>
#include <string>

namespace wattwise {

void name_this_thread(const char* name) {
  constexpr std::size_t kMaxLength = 15;  // TASK_COMM_LEN - 1: pthread_setname_np refuses a longer name
  const std::string cut(name, std::min(std::strlen(name), kMaxLength));
  ::pthread_setname_np(::pthread_self(), cut.c_str());
}

}  // namespace wattwise
