from causefs.testing import load_profile

load_profile()
