// SPDX-License-Identifier: MIT
// A fixture for tests/layers.cmake (never compiled): a
// backend file that calls the front end. This comment naming raw::contiguous
// is not a call; the line below is.
void gather(const RawTensor& x) { const RawTensor dense = raw::contiguous(x); }
