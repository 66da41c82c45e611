# package.py - a Spack recipe for madsweep (issue 19): a CMake build
# against MPI, parallel HDF5, libconfig, OpenSSL's libcrypto, jansson
# (Hugging Face config.json models) and (for the tests) CUnit; the
# install holds bin/madsweep, share/madsweep/configs (catalogues and
# sweep specs), share/madsweep/scripts and share/madsweep/python.
# Use: spack repo add packaging/spack-repo (with this directory as
# packages/madsweep), or copy it into a repo's packages/ directory.
from spack.package import *


class Madsweep(CMakePackage):
    """Design-space sweeps of the MAD-Max distributed-training performance
    model over MPI ranks, written to one parallel HDF5 file."""

    homepage = "https://github.com/madsweep/madsweep"
    git = "https://github.com/madsweep/madsweep.git"

    version("main", branch="main")

    depends_on("c", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("hdf5@1.10:+mpi")
    depends_on("libconfig")
    depends_on("openssl")  # libcrypto: SHA-256 of the catalogues (worker/sha256.c)
    depends_on("jansson")
    depends_on("cunit", type="test")
    depends_on("python@3:", type="run")

    def cmake_args(self):
        return [self.define("MADSWEEP_WERROR", False)]

    def setup_run_environment(self, env):
        env.prepend_path("PYTHONPATH", self.prefix.share.madsweep.python)
        env.set("HDF5_USE_FILE_LOCKING", "FALSE")
