// The text of a Boost.Program_options error, without Boost's own formatting.
//
// Boost builds an error's message by replacing each "%name%" placeholder of its template
// until none is left. A value that contains its own placeholder ("--workers=%value%", or the
// JSON config {"workers": "%value%"}) is substituted forever: the first call to what() never
// returns and the binary hangs at start (found by tests/fuzz/config_fuzz). PoErrorText
// formats the same template in one pass, so substituted text is never read again.
#pragma once

#include <string>

#include <boost/program_options/errors.hpp>

namespace qrm::config {

std::string PoErrorText(const boost::program_options::error& e);

}  // namespace qrm::config
