# Warnings are set per target, never globally.
function(ssgd_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
endfunction()

# ssgd_library(NAME SOURCES ... DEPS ...): a static library named after its
# folder, with the alias ssgd::NAME and includes rooted at the repository.
function(ssgd_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(ssgd_${name} STATIC ${ARG_SOURCES})
  add_library(ssgd::${name} ALIAS ssgd_${name})
  target_include_directories(ssgd_${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(ssgd_${name} PUBLIC ${ARG_DEPS})
  set_target_properties(ssgd_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  ssgd_set_warnings(ssgd_${name})
  # The folder is a room: cmake/ssgd_layering.cmake checks its includes
  # against the rooms it links.
  file(RELATIVE_PATH _room_dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(ssgd_${name} PROPERTIES SSGD_ROOM_DIR "${_room_dir}" SSGD_LIBRARY_ROOM ON)
  set_property(GLOBAL APPEND PROPERTY SSGD_ROOMS ssgd_${name})
endfunction()

# ssgd_room(TARGET DIR): holds the sources in DIR (relative to the repository
# root) to what TARGET links, as each ssgd_library's folder is held: for the
# targets that are not ssgd_library rooms (the ssgd executable, the Python
# module, the injected tracer, the fuzz and benchmark programs). Several
# targets may share one DIR: its sources may then include what any of them
# links.
function(ssgd_room target dir)
  set_target_properties(${target} PROPERTIES SSGD_ROOM_DIR "${dir}")
  set_property(GLOBAL APPEND PROPERTY SSGD_ROOMS ${target})
endfunction()
