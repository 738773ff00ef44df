// The library's version and the git commit of its source tree, fixed at configure time
// (cmake/version.cpp.in).
#pragma once

namespace strata {

const char* library_version();     // "MAJOR.MINOR.PATCH"
const char* library_git_commit();  // 40 hex digits, or "" when the source tree is not a git checkout

}  // namespace strata
