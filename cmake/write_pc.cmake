# Writes hotset.pc (or hotset-sqlite.pc: HOTSET_PC_TEMPLATE says which) at
# install time, not configure time, so that it names the prefix the files
# actually go to, also under `cmake --install --prefix DIR`.
# Included by the install script; reads CMAKE_INSTALL_PREFIX (the install-time
# prefix) and the HOTSET_PC_* variables set just before it.
#
# A library in a directory the dynamic loader does not search (any prefix but
# the system's) is found at run time only through an rpath, so Libs carries
# one unless libdir is one of the linker's implicit directories: a program
# built with `pkg-config --libs hotset` then runs without LD_LIBRARY_PATH.

function(hotset_pc_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

hotset_pc_dir(libdir_abs "${HOTSET_PC_LIBDIR_REL}")
hotset_pc_dir(includedir_abs "${HOTSET_PC_INCLUDEDIR_REL}")
set(HOTSET_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
# ${prefix}-relative where possible, so the file can be edited to relocate.
string(REPLACE "${CMAKE_INSTALL_PREFIX}/" "\${prefix}/" HOTSET_PC_LIBDIR "${libdir_abs}")
string(REPLACE "${CMAKE_INSTALL_PREFIX}/" "\${prefix}/" HOTSET_PC_INCLUDEDIR "${includedir_abs}")
set(HOTSET_PC_RPATH " -Wl,-rpath,\${libdir}")
foreach(dir IN LISTS HOTSET_PC_SYSTEM_LIBDIRS)
  get_filename_component(dir "${dir}" REALPATH)
  get_filename_component(lib "${libdir_abs}" REALPATH)
  if(dir STREQUAL lib)
    set(HOTSET_PC_RPATH "")
  endif()
endforeach()
set(PROJECT_VERSION "${HOTSET_PC_VERSION}")
configure_file("${HOTSET_PC_TEMPLATE}" "${HOTSET_PC_OUTPUT}" @ONLY)
