-- modulefile.lua - an Lmod module for an installed madsweep (issue 19).
-- Copy to MODULEPATH/madsweep/0.1.0.lua and set `prefix` to the
-- CMAKE_INSTALL_PREFIX of the install; load the MPI and parallel HDF5
-- modules it was built with first (or list them in depends_on).
-- The binary finds its catalogues in PREFIX/share/madsweep/configs by
-- itself; MADSWEEP_CONFIGS or --configs point it elsewhere.
whatis("madsweep: MPI/HDF5 design-space sweeps of the MAD-Max performance model")
local prefix = "/opt/madsweep/0.1.0"
-- depends_on("openmpi", "hdf5")
prepend_path("PATH", pathJoin(prefix, "bin"))
prepend_path("PYTHONPATH", pathJoin(prefix, "share/madsweep/python"))
setenv("MADSWEEP_HOME", pathJoin(prefix, "share/madsweep"))
-- sweep files on Lustre: HDF5's flock is refused there
setenv("HDF5_USE_FILE_LOCKING", "FALSE")
