// SPDX-License-Identifier: MIT
// The loss curve the training examples draw (train_mlp, fashion_mnist_cnn): a plain SVG file.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <strata.hpp>

/// Writes the loss per step as a polyline under `title` into the SVG file `path`; a file that
/// cannot be written is a strata::ValueError naming it.
inline void write_loss_svg(const std::string& path, const std::vector<double>& loss,
                           const std::string& title) {
  const double w = 640, h = 360, m = 50;
  double hi = 0;
  for (double l : loss) hi = std::max(hi, l);
  std::ofstream f(path);
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h << "'>\n"
    << "<rect width='100%' height='100%' fill='white'/>\n"
    << "<text x='" << w / 2 << "' y='24' text-anchor='middle' font-family='sans-serif'>" << title
    << "</text>\n"
    << "<line x1='" << m << "' y1='" << h - m << "' x2='" << w - m / 2 << "' y2='" << h - m
    << "' stroke='black'/><line x1='" << m << "' y1='" << m << "' x2='" << m << "' y2='" << h - m
    << "' stroke='black'/>\n"
    << "<text x='" << m - 6 << "' y='" << m + 4 << "' text-anchor='end' font-size='12'>" << hi
    << "</text><text x='" << m - 6 << "' y='" << h - m << "' text-anchor='end' font-size='12'>0"
    << "</text><text x='" << w - m / 2 << "' y='" << h - m + 18 << "' text-anchor='end' "
    << "font-size='12'>step " << loss.size() << "</text>\n<polyline fill='none' stroke='#1f77b4' "
    << "stroke-width='1.5' points='";
  for (std::size_t i = 0; i < loss.size(); ++i) {
    const double px =
        m + (w - 1.5 * m) * double(i) / double(std::max<std::size_t>(loss.size() - 1, 1));
    f << px << ',' << (h - m) - (h - 2 * m) * loss[i] / hi << ' ';
  }
  f << "'/>\n</svg>\n";
  if (!f) throw strata::ValueError("cannot write the loss curve " + path);
}
