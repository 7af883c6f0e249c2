# Every Tandem component is an object library; lib/Tandem links them all into
# one shared library (libTandem.so). Tools and out-of-tree plugins link that
# single library, so there is exactly one copy of every MLIR registry, TypeID
# and cl::opt in a process.
define_property(GLOBAL PROPERTY TANDEM_COMPONENTS
  BRIEF_DOCS "Object libraries linked into libTandem"
  FULL_DOCS "Object libraries linked into libTandem")

function(tandem_add_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set_property(GLOBAL APPEND PROPERTY TANDEM_COMPONENTS ${name})
endfunction()

# tandem_configure_prelude(TEMPLATE OUTPUT PART FILE [PART FILE ...]): reads
# each FILE into the variable TANDEM_<PART>_SOURCE and configures TEMPLATE
# into OUTPUT with them (@ONLY), reconfiguring when a FILE changes. The
# emitters paste real files into generated code this way (PreludeSource.h.in).
function(tandem_configure_prelude template output)
  set(parts ${ARGN})
  while(parts)
    list(POP_FRONT parts part file)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(READ ${file} TANDEM_${part}_SOURCE)
  endwhile()
  configure_file(${template} ${output} @ONLY)
endfunction()
