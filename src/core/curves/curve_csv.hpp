// Reads a learning curve from a CSV file (the shared data sets, `explsched predict`). The header
// names the columns; the step column is the first of `step`, `iteration`, `progress` present,
// the metric column is chosen by name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/curves/trial.hpp"

namespace explsched {

struct CurveCsv {
    std::string step_column;
    std::string metric_column;
    std::vector<CurvePoint> points;
};

// Parses CSV text. `source` names the input in errors ("FILE:LINE: ..."). Empty lines are skipped;
// a metric of "nan"/"inf" is kept (a diverged run); any other unparsable cell, a wrong number of
// cells or a missing column is an error naming the line and column.
Result<CurveCsv> parse_curve_csv(std::string_view text, const std::string& source,
                                 const std::string& metric_column = "metric");
Result<CurveCsv> read_curve_csv(const std::string& path, const std::string& metric_column = "metric");

// The direction a sweep's directory declares in its `direction` file (`min` or `max`, as
// contrib/heldout's sweeps and the simulator's curve libraries have it): nullopt when it has
// none; an error naming the file when it says neither.
Result<std::optional<Direction>> read_direction_file(const std::string& dir);

}  // namespace explsched
