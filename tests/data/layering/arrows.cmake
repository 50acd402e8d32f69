# The arrows of the tree in this folder, for
# layering.architecture_doc_check_catches_a_wrong_arrow: high links low only.
set(SSGD_LINKS_base "")
set(SSGD_LINKS_low "base")
set(SSGD_LINKS_high "low")
set(SSGD_LIBRARY_ROOM_DIRS "base;low;high")
