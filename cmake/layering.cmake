# The dependency rule between Ferry's modules (docs/architecture.md), as data. Two checks read it:
#  - cmake/check_layering.cmake scans every #include under src/ (run as a build step of the
#    `all` target and as the unit test `layering.includes`), so a forbidden include fails the
#    build;
#  - ferry_check_layering_links() (called at the end of the top-level CMakeLists.txt) checks
#    each library's and unit test's direct links to ferry_* targets at configure time.
#
# A module is a directory under src/ (the longest listed prefix wins: src/storage/s3/x.cc is in
# storage/s3). FERRY_LAYER_ALLOW_<module> lists what the module may include and link besides
# itself. Unit tests (*_test.cc, and test executables) may also use their module's submodules
# and the test fixtures in FERRY_LAYER_TEST_FIXTURES.

set(FERRY_LAYER_MODULES
    base http http/testing aws
    storage storage/memory storage/local storage/remote storage/s3 storage/web storage/testing
    backends server transfer shard mount proxy job cli apps python
    proxy/pypi proxy/upstream proxy/service proxy/hf proxy/pypi_routes proxy/prewarm
    tracker tracker/wire tracker/memory tracker/sqlite tracker/postgres tracker/testing tracker/artifacts
    tracker/mlflow
    sysmetrics tracker/client job/track tracker/retention ui)

set(FERRY_LAYER_ALLOW_base "")
set(FERRY_LAYER_ALLOW_http base)
set(FERRY_LAYER_ALLOW_http/testing base)
set(FERRY_LAYER_ALLOW_aws http base)
# The Store interface, URLs and the registry: nothing but base.
set(FERRY_LAYER_ALLOW_storage base)
set(FERRY_LAYER_ALLOW_storage/memory storage base)
set(FERRY_LAYER_ALLOW_storage/local storage base)
set(FERRY_LAYER_ALLOW_storage/remote storage http base)
set(FERRY_LAYER_ALLOW_storage/s3 storage storage/remote aws http base)
set(FERRY_LAYER_ALLOW_storage/web storage storage/remote http base)
set(FERRY_LAYER_ALLOW_storage/testing storage base)
# The composition root: the only module that knows the concrete backends.
set(FERRY_LAYER_ALLOW_backends storage storage/local storage/s3 storage/web aws http base)
# The HTTP server (ferry serve): Beast/Asio, limits, auth, routing; handlers come from above.
set(FERRY_LAYER_ALLOW_server base)
# Everything above storage sees stores only through storage/ (no backend, no aws, no http).
set(FERRY_LAYER_ALLOW_transfer storage base)
set(FERRY_LAYER_ALLOW_shard storage base)
set(FERRY_LAYER_ALLOW_mount storage base)
# The blob cache of `ferry serve`: stores through storage/, upstreams through its Fetcher.
set(FERRY_LAYER_ALLOW_proxy storage base)
set(FERRY_LAYER_ALLOW_job transfer storage base)
# System metrics (/proc, statvfs, NVML through dlopen): base only.
set(FERRY_LAYER_ALLOW_sysmetrics base)
# `ferry run --track`: the tracking run of a job (system metrics, output log, checkpoints) through
# the MLflow REST client; hooks into the job lifecycle (job/run_hooks.h).
set(FERRY_LAYER_ALLOW_job/track job tracker/client sysmetrics storage base)
# The experiment tracker (issue 14): the model, the TrackerStore interface and the run search
# as pure code; backends below it (SQLite alone includes sqlite3.h); the MLflow REST layer and
# the artifact repository on top, as handlers on the server's router.
set(FERRY_LAYER_ALLOW_tracker base)
set(FERRY_LAYER_ALLOW_tracker/memory tracker base)
set(FERRY_LAYER_ALLOW_tracker/sqlite tracker base)
set(FERRY_LAYER_ALLOW_tracker/postgres tracker base)
set(FERRY_LAYER_ALLOW_tracker/testing tracker base)
# MLflow's wire (errors, statuses, JSON), shared by the artifact and tracking APIs.
set(FERRY_LAYER_ALLOW_tracker/wire server base)
set(FERRY_LAYER_ALLOW_tracker/artifacts tracker/wire server storage base)
set(FERRY_LAYER_ALLOW_tracker/mlflow tracker tracker/wire tracker/artifacts server storage base)
# A client of an MLflow tracking server (ferry run --track): HTTP only, no server code.
set(FERRY_LAYER_ALLOW_tracker/client http base)
# Checkpoint retention: decides with tracker/retention_policy.h, deletes through the artifact
# repository, hears of uploads as the artifact handlers' UploadObserver.
set(FERRY_LAYER_ALLOW_tracker/retention tracker tracker/artifacts server storage base)
# PyPI's simple API as pure functions (the proxy's handlers call them): base only.
set(FERRY_LAYER_ALLOW_proxy/pypi base)
# The proxy's way upstream: the HTTP client (and the URL rules of proxy/pypi).
set(FERRY_LAYER_ALLOW_proxy/upstream proxy proxy/pypi storage http base)
# What the proxy's handlers share (blob answers, context, metrics).
set(FERRY_LAYER_ALLOW_proxy/service proxy proxy/upstream server storage http base)
# The handlers: Hugging Face Hub at /hf, PyPI at /pypi.
set(FERRY_LAYER_ALLOW_proxy/hf proxy/service proxy/upstream proxy server storage http base)
# A client of a running server (ferry serve prewarm): HTTP and the PyPI page parser.
set(FERRY_LAYER_ALLOW_proxy/prewarm proxy/pypi http base)
set(FERRY_LAYER_ALLOW_proxy/pypi_routes
    proxy/service proxy/upstream proxy/pypi proxy server storage http base)
# The web UI (issue 15): embedded files served as handlers on the server's router.
set(FERRY_LAYER_ALLOW_ui server base)
# Only the binaries' wiring links the composition root.
set(FERRY_LAYER_ALLOW_cli
    backends job transfer shard mount proxy proxy/service proxy/upstream proxy/hf proxy/pypi_routes
    proxy/prewarm tracker tracker/sqlite tracker/postgres tracker/artifacts tracker/mlflow sysmetrics job/track
    tracker/retention tracker/client ui
    server storage http base)
set(FERRY_LAYER_ALLOW_apps cli base)
set(FERRY_LAYER_ALLOW_python backends shard sysmetrics storage base)

set(FERRY_LAYER_TEST_FIXTURES
    storage/memory storage/local storage/testing http/testing tracker/memory tracker/testing)

# Third-party headers and the one module (or file) that may include them (house style 9).
set(FERRY_LAYER_THIRD_PARTY
    "curl/=http"
    "fuse=mount/fuse_adapter.cc"
    "pybind11/=python"
    "pugixml=aws"
    "CLI/=cli"
    "yaml-cpp/=job/spec.cc"
    "openssl/=base/hash.cc"
    "isa-l/=base/crc32c.cc"
    "intel-ipsec-mb.h=base/sha256_lanes.cc"
    "boost/=server"
    "sqlite3.h=tracker/sqlite"
    "libpq-fe.h=tracker/postgres")

# ferry_layer_module(<path relative to src/> <out-var>): the module a file or include belongs
# to; "" when none.
function(ferry_layer_module path out)
  set(best "")
  foreach(m IN LISTS FERRY_LAYER_MODULES)
    string(FIND "${path}/" "${m}/" pos)
    string(LENGTH "${m}" n)
    string(LENGTH "${best}" bn)
    if(pos EQUAL 0 AND n GREATER bn)
      set(best "${m}")
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

# ferry_layer_allowed(<module> <used module> <is-test> <out-var>): TRUE when `module` may use
# `used`.
function(ferry_layer_allowed module used is_test out)
  set(ok FALSE)
  if(used STREQUAL module OR used IN_LIST FERRY_LAYER_ALLOW_${module})
    set(ok TRUE)
  elseif(is_test)
    string(FIND "${used}/" "${module}/" pos)
    if(used IN_LIST FERRY_LAYER_TEST_FIXTURES OR pos EQUAL 0)
      set(ok TRUE)
    endif()
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# Checks the direct ferry_* links of every target defined under src/ (configure time).
function(ferry_check_layering_links)
  get_property(dirs DIRECTORY "${PROJECT_SOURCE_DIR}" PROPERTY SUBDIRECTORIES)
  set(targets "")
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(sub DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${sub})
    string(FIND "${dir}/" "${PROJECT_SOURCE_DIR}/src/" pos)
    if(pos EQUAL 0)
      get_property(t DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
      list(APPEND targets ${t})
    endif()
  endwhile()
  # Each target's module, from the directory of its first source.
  foreach(t IN LISTS targets)
    get_target_property(srcs ${t} SOURCES)
    get_target_property(sdir ${t} SOURCE_DIR)
    list(GET srcs 0 first)
    cmake_path(ABSOLUTE_PATH first BASE_DIRECTORY "${sdir}")
    cmake_path(RELATIVE_PATH first BASE_DIRECTORY "${PROJECT_SOURCE_DIR}/src")
    cmake_path(GET first PARENT_PATH d)
    ferry_layer_module("${d}" m)
    set(module_of_${t} "${m}")
  endforeach()
  set(errors "")
  foreach(t IN LISTS targets)
    set(m "${module_of_${t}}")
    if(m STREQUAL "")
      list(APPEND errors "target ${t}: in no module of cmake/layering.cmake")
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    set(is_test FALSE)
    if(t MATCHES "_test$")
      set(is_test TRUE)
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(NOT libs)
      continue()
    endif()
    foreach(lib IN LISTS libs)
      if(NOT TARGET ${lib} OR NOT DEFINED module_of_${lib})
        continue()  # third-party, system, or outside src/
      endif()
      ferry_layer_allowed("${m}" "${module_of_${lib}}" ${is_test} ok)
      if(NOT ok)
        list(APPEND errors "target ${t} (module ${m}) links ${lib} (module ${module_of_${lib}})")
      endif()
    endforeach()
  endforeach()
  if(errors)
    list(JOIN errors "\n  " text)
    message(FATAL_ERROR "Module layering (cmake/layering.cmake) violated:\n  ${text}")
  endif()
endfunction()
