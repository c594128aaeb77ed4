// SPDX-License-Identifier: MIT
// The check_grads machinery for 1 to 3 arguments, compiled once for every
// test executable (see the extern declarations in check_grads.hpp).
#include "support/check_grads.hpp"

namespace strata::testing::detail_cg {

template void check_level<1>(const TablePtr<1>&, const Args<1>&, int, int, Modes,
                             const GradCheckOptions&, const std::string&, uint64_t&,
                             GradCheckResult&);
template void check_level<2>(const TablePtr<2>&, const Args<2>&, int, int, Modes,
                             const GradCheckOptions&, const std::string&, uint64_t&,
                             GradCheckResult&);
template void check_level<3>(const TablePtr<3>&, const Args<3>&, int, int, Modes,
                             const GradCheckOptions&, const std::string&, uint64_t&,
                             GradCheckResult&);

}  // namespace strata::testing::detail_cg
