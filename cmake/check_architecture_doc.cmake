# cmake -DSSGD_ARROWS_FILE=<arrows.cmake> -DSSGD_DOC=<architecture.md> -P check_architecture_doc.cmake
#
# Fails unless the table of rooms in docs/architecture.md ("Rooms and
# arrows") draws the build's arrows: one row per library room, whose links
# column names exactly the rooms it links directly (common left out, as the
# table leaves it out) and whose level is one more than the highest level it
# links (common is level 0). A row is a line "| LEVEL | `ROOM/` | ... | LINKS |".
# In the links column a room is written as its folder, `traces/` is the
# format room, a bare name is the simulator's room of that name
# ("network" is simulator/network), and what is in parentheses (external
# libraries) is not a room. The arrows come from cmake/ssgd_layering.cmake.
# A row for a room that this build leaves out (traces/import/nsys without
# SQLite, tracer/cupti without CUDA) is skipped when its folder has a
# CMakeLists.txt beside the map's repository.
cmake_minimum_required(VERSION 3.20)
include(${SSGD_ARROWS_FILE})
get_filename_component(_tree "${SSGD_DOC}" DIRECTORY)
get_filename_component(_tree "${_tree}/.." ABSOLUTE)

function(_room_name text out)
  string(STRIP "${text}" t)
  string(REPLACE "`" "" t "${t}")
  string(REGEX REPLACE "/$" "" t "${t}")
  if(NOT t IN_LIST SSGD_LIBRARY_ROOM_DIRS AND "simulator/${t}" IN_LIST SSGD_LIBRARY_ROOM_DIRS)
    set(t "simulator/${t}")
  endif()
  set(${out} "${t}" PARENT_SCOPE)
endfunction()

file(STRINGS ${SSGD_DOC} rows REGEX "^\\| *[0-9]+ *\\|")
set(problems "")
set(drawn "")
foreach(row IN LISTS rows)
  string(REPLACE ";" "," row "${row}")
  string(REPLACE "|" ";" cells "${row}")
  list(LENGTH cells n)
  if(NOT n EQUAL 7)
    string(APPEND problems "  a row without five columns: ${row}\n")
    continue()
  endif()
  list(GET cells 1 level)
  string(STRIP "${level}" level)
  list(GET cells 2 room_text)
  _room_name("${room_text}" room)
  list(GET cells 5 links_text)
  string(REGEX REPLACE "\\([^)]*\\)" "" links_text "${links_text}")
  string(REPLACE "," ";" link_list "${links_text}")
  set(doc_links "")
  foreach(l IN LISTS link_list)
    _room_name("${l}" name)
    if(NOT name STREQUAL "")
      list(APPEND doc_links ${name})
    endif()
  endforeach()
  if(NOT room IN_LIST SSGD_LIBRARY_ROOM_DIRS AND EXISTS "${_tree}/${room}/CMakeLists.txt")
    message(STATUS "architecture map: ${room}/ is not built here; its row is not checked")
    continue()
  endif()
  if(NOT room IN_LIST SSGD_LIBRARY_ROOM_DIRS)
    string(APPEND problems "  ${room}/: in the map's table, but no library room of the build\n")
    continue()
  endif()
  list(APPEND drawn ${room})
  set(level_${room} ${level})
  string(MAKE_C_IDENTIFIER "${room}" id)
  set(build_links ${SSGD_LINKS_${id}})
  list(REMOVE_ITEM build_links common)
  set(a ${doc_links})
  set(b ${build_links})
  list(SORT a)
  list(SORT b)
  if(NOT "${a}" STREQUAL "${b}")
    string(REPLACE ";" ", " doc_text "${doc_links}")
    string(REPLACE ";" ", " build_text "${build_links}")
    string(APPEND problems "  ${room}/: the map says it links ${doc_text}; the build says ${build_text}\n")
  endif()
endforeach()

# Levels, from the build's arrows: rooms are listed after the rooms they link.
foreach(dir IN LISTS SSGD_LIBRARY_ROOM_DIRS)
  string(MAKE_C_IDENTIFIER "${dir}" id)
  set(top -1)
  foreach(l IN LISTS SSGD_LINKS_${id})
    string(MAKE_C_IDENTIFIER "${l}" lid)
    if(DEFINED computed_${lid} AND computed_${lid} GREATER top)
      set(top ${computed_${lid}})
    endif()
  endforeach()
  math(EXPR computed_${id} "${top} + 1")
  if(NOT dir IN_LIST drawn)
    string(APPEND problems "  ${dir}/: a library room of the build, missing from the map's table\n")
  elseif(NOT level_${dir} EQUAL computed_${id})
    string(APPEND problems "  ${dir}/: the map puts it at level ${level_${dir}}; its arrows put it at ${computed_${id}}\n")
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "docs/architecture.md does not draw the build's arrows "
                      "(the rooms' DEPS in CMake; cmake/check_architecture_doc.cmake):\n${problems}")
endif()
list(LENGTH drawn count)
message(STATUS "architecture map: ${count} rooms drawn with the build's arrows")
