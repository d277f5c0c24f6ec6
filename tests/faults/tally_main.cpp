// The suite's main: runs the tests, then prints the tally over every trial (docs/safety.md's numbers).
#include <gtest/gtest.h>

#include <iostream>

#include "invariants.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  const auto& t = wattwise::faults::tally();
  std::cout << "faults tally: trials " << t.trials << ", survived " << t.survived << ", runs lost "
            << t.runs_lost << ", GPUs left changed " << t.gpus_left_changed << ", orphans " << t.orphans
            << "\n";
  return result;
}
