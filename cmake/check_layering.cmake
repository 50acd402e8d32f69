# cmake -DSSGD_ROOMS_FILE=<rooms.cmake> -DSSGD_SOURCE_DIR=<tree> -P check_layering.cmake
#
# Reads every .h and .cc file of every room (a folder; files in a room nested
# inside it belong to that room) and fails, listing each one, when a file
# includes a header of a room outside its allowed list. An include belongs to
# the room whose folder is the longest prefix of its path; includes under no
# room (system headers, generated files outside the rooms) are not checked.
# The table comes from cmake/ssgd_layering.cmake.
cmake_minimum_required(VERSION 3.20)
include(${SSGD_ROOMS_FILE})
get_filename_component(SSGD_SOURCE_DIR "${SSGD_SOURCE_DIR}" ABSOLUTE)

# The room of a path: the longest room folder that prefixes it, or "".
function(_room_of path out)
  set(best "")
  string(LENGTH "${best}" best_len)
  string(LENGTH "${path}" path_len)
  foreach(dir IN LISTS SSGD_ROOM_DIRS)
    string(LENGTH "${dir}" len)
    if(NOT path_len GREATER len)
      continue()
    endif()
    string(SUBSTRING "${path}" 0 ${len} head)
    string(SUBSTRING "${path}" ${len} 1 next)
    if(head STREQUAL dir AND next STREQUAL "/" AND len GREATER best_len)
      set(best ${dir})
      set(best_len ${len})
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

set(violations "")
set(checked 0)
foreach(dir IN LISTS SSGD_ROOM_DIRS)
  string(MAKE_C_IDENTIFIER "${dir}" id)
  set(allowed ${SSGD_ALLOWED_${id}})
  file(GLOB_RECURSE files RELATIVE ${SSGD_SOURCE_DIR} ${SSGD_SOURCE_DIR}/${dir}/*.h
       ${SSGD_SOURCE_DIR}/${dir}/*.cc)
  foreach(f IN LISTS files)
    _room_of("${f}" owner)
    if(NOT owner STREQUAL dir)
      continue()  # a nested room's file: checked with that room
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${SSGD_SOURCE_DIR}/${f} lines)
    set(n 0)
    foreach(line IN LISTS lines)
      math(EXPR n "${n} + 1")
      if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
        continue()
      endif()
      set(inc ${CMAKE_MATCH_1})
      _room_of("${inc}" target)
      if(target STREQUAL "" OR target IN_LIST allowed)
        continue()
      endif()
      string(REPLACE ";" ", " allowed_text "${allowed}")
      string(APPEND violations "  ${f}:${n}: includes \"${inc}\", but ${dir} may include only: ${allowed_text}\n")
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "includes across a forbidden arrow (docs/architecture.md, \"Rooms\"; "
                      "the arrows are the rooms' DEPS in CMake):\n${violations}")
endif()
message(STATUS "layering: ${checked} files in the rooms include only what their rooms may use")
