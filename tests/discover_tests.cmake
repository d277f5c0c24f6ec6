# wattwise_discover_tests(TARGET [gtest_discover_tests arguments...]): gtest_discover_tests, with the tests
# that try an attack or a hostile input also labelled `hostile`, so `ctest -L hostile` runs them all
# (docs/safety.md, "The hostile suite"). A test is hostile when its full name contains "Hostile" (the way
# to add one: a suite or test name that says so), or matches one of the patterns below, which name the
# hostile tests written before the label existed.
set(WATTWISE_HOSTILE_TESTS
    "*Hostile*"
    "JournalReader.*" "JournalRead.*" "JournalWrite.*" "GpuLockFile.*" "StateDir.*" "UnsafeStateDir.*"
    "MarkerReceiver.Refuses*" "MarkerClient.StalledReceiver*" "*InvalidUtf8*" "StoreReportText.FlippedBytes*"
    "WindowServer.TheSocketIsReachableByThisUserOnly" "WindowServer.MalformedAndOversized*"
    "WindowServer.ASilentClient*" "WindowServer.ConnectionsBeyondTheLimit*"
    # Issue 22: crafted result files for merge, outputs that are links, FIFOs, devices or descriptors, what
    # is not a regular file given as input, a target link swapped in, bad runs CSVs, the daemon's refusals
    # (malformed requests, another user's GPU, an invalid policy).
    "MergeFiles.*" "FirstContactTest.ALink*" "FirstContactTest.AFifo*" "FirstContactTest.ADevice*"
    "FirstContactTest.ADescriptor*" "FirstContactTest.WhatIsNotARegularFile*" "FirstContactTest.MergeOf*"
    "AtomicFile.ALinkAtTheTarget*" "RunsCsv.NanInf*" "RunsCsv.UnclosedQuote*"
    "DaemonProtocol.Refuses*" "DaemonPolicy.AnInvalidPolicy*"
    "DaemonTest.MalformedRequests*" "DaemonTest.AUserCannotChange*" "DaemonTest.AnInvalidPolicy*"
    "DaemonTest.OneClientPerGpu*" "JobOwnerRuleTest.*")
list(JOIN WATTWISE_HOSTILE_TESTS ":" WATTWISE_HOSTILE_FILTER)

function(wattwise_discover_tests target)
  cmake_parse_arguments(ARG "" "" "PROPERTIES" ${ARGN})
  # LABELS among the PROPERTIES (one label, or several written "a;b"): kept for both halves. A list value
  # does not survive gtest_discover_tests' PROPERTIES (it reaches set_tests_properties split in two), so
  # both halves get their labels from a script that ctest runs after the discovered tests are defined.
  set(labels "")
  set(properties "")
  set(in_labels FALSE)
  foreach(item IN LISTS ARG_PROPERTIES)
    if(item STREQUAL "LABELS")
      set(in_labels TRUE)
    elseif(in_labels AND NOT item MATCHES "^[A-Z_]+$")
      list(APPEND labels "${item}")
    else()
      set(in_labels FALSE)
      list(APPEND properties "${item}")
    endif()
  endforeach()
  # A variable name per call: the same target may be discovered twice (with another prefix).
  string(MAKE_C_IDENTIFIER "wattwise_${target}_${ARG_UNPARSED_ARGUMENTS}" list_variable)
  gtest_discover_tests(${target} ${ARG_UNPARSED_ARGUMENTS} TEST_FILTER "-${WATTWISE_HOSTILE_FILTER}"
                       TEST_LIST ${list_variable}_other PROPERTIES ${properties})
  gtest_discover_tests(${target} ${ARG_UNPARSED_ARGUMENTS} TEST_FILTER "${WATTWISE_HOSTILE_FILTER}"
                       TEST_LIST ${list_variable}_hostile PROPERTIES ${properties})
  set(hostile_labels ${labels} hostile)
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${list_variable}_labels.cmake")
  file(WRITE "${script}"
       "foreach(test IN LISTS ${list_variable}_hostile)\n"
       "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${hostile_labels}\")\n"
       "endforeach()\n")
  if(labels)
    file(APPEND "${script}"
         "foreach(test IN LISTS ${list_variable}_other)\n"
         "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${labels}\")\n"
         "endforeach()\n")
  endif()
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()
