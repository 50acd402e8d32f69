// The translation unit that builds the test binaries' shared precompiled
// header (tests/CMakeLists.txt, ssgd_test_pch): the header is all it holds.
