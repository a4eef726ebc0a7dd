# The libraries Arbor links: found through pkg-config when it knows them,
# otherwise by header and library name in CMake's search paths
# (CMAKE_PREFIX_PATH, CMAKE_INCLUDE_PATH, CMAKE_LIBRARY_PATH). Each one found
# becomes the imported target arbor_dep::NAME.
#
# Used twice: by the build (CMakeLists.txt) and, installed beside
# arborConfig.cmake, by find_package(arbor) for the static library's link
# interface.
include_guard(GLOBAL)
find_package(PkgConfig QUIET)

# arb_find_dep(NAME PC_MODULE HEADER LIBRARY)
# Sets, in the caller's scope, ARB_DEP_<NAME>_FOUND, and ARB_DEP_<NAME>_PC
# (the pkg-config module) when pkg-config found it or ARB_DEP_<NAME>_LIB
# (the library name) when the header and library search did.
function(arb_find_dep name module header library)
  set(ARB_DEP_${name}_PC "" PARENT_SCOPE)
  set(ARB_DEP_${name}_LIB "" PARENT_SCOPE)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(_arb_dep_${name} QUIET IMPORTED_TARGET GLOBAL ${module})
    if(_arb_dep_${name}_FOUND)
      if(NOT TARGET arbor_dep::${name})
        add_library(arbor_dep::${name} INTERFACE IMPORTED GLOBAL)
        set_target_properties(arbor_dep::${name} PROPERTIES
                              INTERFACE_LINK_LIBRARIES PkgConfig::_arb_dep_${name})
      endif()
      set(ARB_DEP_${name}_FOUND TRUE PARENT_SCOPE)
      set(ARB_DEP_${name}_PC ${module} PARENT_SCOPE)
      return()
    endif()
  endif()
  find_path(ARB_DEP_${name}_INCLUDE_DIR ${header})
  find_library(ARB_DEP_${name}_LIBRARY ${library})
  if(ARB_DEP_${name}_INCLUDE_DIR AND ARB_DEP_${name}_LIBRARY)
    if(NOT TARGET arbor_dep::${name})
      add_library(arbor_dep::${name} UNKNOWN IMPORTED GLOBAL)
      set_target_properties(arbor_dep::${name} PROPERTIES
                            IMPORTED_LOCATION "${ARB_DEP_${name}_LIBRARY}"
                            INTERFACE_INCLUDE_DIRECTORIES "${ARB_DEP_${name}_INCLUDE_DIR}")
    endif()
    set(ARB_DEP_${name}_FOUND TRUE PARENT_SCOPE)
    set(ARB_DEP_${name}_LIB ${library} PARENT_SCOPE)
  else()
    set(ARB_DEP_${name}_FOUND FALSE PARENT_SCOPE)
  endif()
endfunction()
