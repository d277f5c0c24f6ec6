#pragma once

#include <cstdint>
#include <optional>

// Count, mean, spread, least and greatest of a stream of values in constant memory (Welford's update: the
// sum of squared deviations is kept, not the sum of squares, so a CV of 0.1% on values of 1e4 keeps its
// digits over millions of values). A month of a job's iterations summarises in these five numbers.
namespace wattwise {

class RunningStats {
 public:
  void add(double value);

  std::uint64_t count() const { return count_; }
  std::optional<double> mean() const;
  std::optional<double> min() const;
  std::optional<double> max() const;
  // The sample standard deviation (n - 1); nullopt below two values.
  std::optional<double> stddev() const;
  // stddev / |mean|; nullopt below two values or at a zero mean.
  std::optional<double> cv() const;

 private:
  std::uint64_t count_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // the sum of squared deviations from the running mean
  double min_ = 0;
  double max_ = 0;
};

}  // namespace wattwise
