# The `ci` preset builds with CMAKE_UNITY_BUILD (each target's sources compiled in batches of 8
# as one translation unit: the headers of Beast, nlohmann, fmt and gtest parsed and their
# templates instantiated once a batch instead of once a file; the ASan build took 1,143 s on 2
# cores without). The files below are compiled alone, each for the reason given: names in an
# anonymous namespace that another file of its target also defines, or (-Wsubobject-linkage) a
# type of the file's anonymous namespace inside a type of a named one, which GCC only allows in
# a main file. Other presets build file by file, so a new clash shows up in `ci` only:
# `cmake --build --preset ci` names it, and it goes here (or the name gets unique).
set(FERRY_UNITY_ALONE
    # a `Clock` alias in an anonymous namespace, beside job/run_system.h's ferry::job::Clock
    src/job/doctor.cc src/job/doctor_url.cc src/job/process_tree.cc src/job/run_guard.cc
    src/job/process_tree_test.cc
    # -Wsubobject-linkage
    src/storage/local/local_list.cc src/sysmetrics/nvml.cc
    # IsNumericClause, also in search_filter.cc; SetStage, also in experiment_handlers.cc
    src/tracker/search_match.cc src/tracker/mlflow/run_handlers.cc
    # test helpers defined in more than one test file of a binary (Req, PatternByte, kB, At,
    # kCommit)
    src/server/admission_test.cc src/server/server_stream_test.cc
    src/mount/block_cache_fill_test.cc src/mount/file_reader_test.cc src/mount/pinned_object_test.cc
    src/transfer/stop_and_stall_test.cc src/transfer/unstable_source_test.cc
    src/proxy/hf/hf_service_test.cc)

function(ferry_unity_alone)
  foreach(f IN LISTS FERRY_UNITY_ALONE)
    # The source's properties live in the directory whose CMakeLists.txt names it: the
    # nearest one above it.
    cmake_path(GET f PARENT_PATH dir)
    while(NOT EXISTS ${PROJECT_SOURCE_DIR}/${dir}/CMakeLists.txt)
      cmake_path(GET dir PARENT_PATH dir)
    endwhile()
    set_source_files_properties(${PROJECT_SOURCE_DIR}/${f} DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
                                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endforeach()
endfunction()
