#include "core/curves/curve_csv.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace explsched {

namespace {

std::vector<std::string_view> split_cells(std::string_view line) {
    std::vector<std::string_view> cells;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        std::string_view cell =
            line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
        while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t' || cell.back() == '\r')) {
            cell.remove_suffix(1);
        }
        cells.push_back(cell);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return cells;
}

// strtod accepts "nan"/"inf", which we want for the metric (divergence) and reject elsewhere.
bool parse_number(std::string_view cell, double& value) {
    if (cell.empty()) return false;
    const std::string text(cell);
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && errno != ERANGE;
}

}  // namespace

Result<CurveCsv> parse_curve_csv(std::string_view text, const std::string& source,
                                 const std::string& metric_column) {
    CurveCsv out;
    out.metric_column = metric_column;
    std::size_t line_no = 0;
    std::size_t step_index = 0, metric_index = 0, n_columns = 0;
    bool have_header = false;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        const auto cells = split_cells(line);
        const std::string where = source + ":" + std::to_string(line_no);
        if (!have_header) {
            have_header = true;
            n_columns = cells.size();
            bool found_step = false, found_metric = false;
            for (const char* name : {"step", "iteration", "progress"}) {
                for (std::size_t i = 0; i < cells.size() && !found_step; ++i) {
                    if (cells[i] == name) {
                        step_index = i;
                        out.step_column = name;
                        found_step = true;
                    }
                }
            }
            for (std::size_t i = 0; i < cells.size() && !found_metric; ++i) {
                if (cells[i] == metric_column) {
                    metric_index = i;
                    found_metric = true;
                }
            }
            if (!found_step) {
                return make_error(where + ": header has no step column (step, iteration or progress)");
            }
            if (!found_metric) {
                return make_error(where + ": header has no metric column '" + metric_column + "'");
            }
            continue;
        }
        if (cells.size() != n_columns) {
            return make_error(where + ": " + std::to_string(cells.size()) + " cells, header has " +
                              std::to_string(n_columns));
        }
        CurvePoint point;
        if (!parse_number(cells[step_index], point.step) || !std::isfinite(point.step)) {
            return make_error(where + ": column '" + out.step_column + "': '" +
                              std::string(cells[step_index]) + "' is not a finite number");
        }
        if (!parse_number(cells[metric_index], point.metric)) {
            return make_error(where + ": column '" + metric_column + "': '" +
                              std::string(cells[metric_index]) + "' is not a number");
        }
        if (!out.points.empty() && point.step < out.points.back().step) {
            return make_error(where + ": column '" + out.step_column + "': step " +
                              std::string(cells[step_index]) + " decreases");
        }
        out.points.push_back(point);
    }
    if (!have_header) return make_error(source + ": empty file, expected a CSV header");
    return out;
}

Result<CurveCsv> read_curve_csv(const std::string& path, const std::string& metric_column) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return make_error(path + ": read failed");
    return parse_curve_csv(buffer.str(), path, metric_column);
}

Result<std::optional<Direction>> read_direction_file(const std::string& dir) {
    const std::filesystem::path file = std::filesystem::path(dir) / "direction";
    std::error_code ec;  // unreadable: as absent
    if (!std::filesystem::is_regular_file(file, ec)) return std::optional<Direction>{};
    std::ifstream in(file);
    std::string word;
    if (!(in >> word)) word = "(empty)";
    auto d = parse_direction(word);
    if (!d) return make_error(file.string() + ": " + d.error().message);
    return std::optional<Direction>{*d};
}

}  // namespace explsched
