// Loss-curve files of run.mode = forecast (io/curve_files): CSV and HDF5 files written here, the
// values read back, the reading rules (columns by name, extra columns ignored, sorted and repeated
// steps, divergences, partial last lines, quoted ids) with their notes, and every malformed case as
// one InputError naming file, run and line/dataset, or a skipped run with skip_bad_runs.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include "io/curve_files.hpp"
#include "test_hdf5_support.hpp"

namespace {

using hpt::io::read_curves;
using hpt::test::expect_input_error;
using hpt::test::TempDir;

std::string write_text(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string p = dir.file(name);
  std::ofstream(p) << text;
  return p;
}

// Series of one HDF5 run: name -> values (step written as int64, the others as float64).
using Series = std::map<std::string, std::vector<double>>;

std::string write_h5(const TempDir& dir, const std::string& name,
                     const std::map<std::string, Series>& runs) {
  const std::string p = dir.file(name);
  const hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t top = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (const auto& [id, series] : runs) {
    const hid_t g = H5Gcreate2(top, id.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (const auto& [key, v] : series) {
      const hsize_t n = v.size();
      const hid_t space = H5Screate_simple(1, &n, nullptr);
      if (key == "step") {
        std::vector<long long> s(v.begin(), v.end());
        const hid_t d =
            H5Dcreate2(g, key.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data());
        H5Dclose(d);
      } else {
        const hid_t d = H5Dcreate2(g, key.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        H5Dclose(d);
      }
      H5Sclose(space);
    }
    H5Gclose(g);
  }
  H5Gclose(top);
  H5Fclose(f);
  return p;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ForecastInput, CsvInterleavedRunsAreReadInOrder) {
  TempDir dir;
  const auto p = write_text(dir, "c.csv",
                            "run,step,loss,grad_norm,lr\n"
                            "a,0,2.5,1.0,0.1\n"
                            "b,0,3.0,2.0,0.01\n"
                            "a,1,2.0,0.9,0.1\n"
                            "\n"
                            "b,5,1.5,1.5,0.01\r\n");
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_TRUE(set.skipped.empty());
  EXPECT_EQ(set.runs[0].id, "a");
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{0, 1}));
  EXPECT_EQ(set.runs[0].loss, (std::vector<double>{2.5, 2.0}));
  EXPECT_EQ(set.runs[0].grad_norm, (std::vector<double>{1.0, 0.9}));
  EXPECT_EQ(set.runs[1].id, "b");
  EXPECT_EQ(set.runs[1].steps, (std::vector<long long>{0, 5}));
  EXPECT_EQ(set.runs[1].lr, (std::vector<double>{0.01, 0.01}));
}

TEST(ForecastInput, CsvWithoutOptionalColumns) {
  TempDir dir;
  const auto p = write_text(dir, "c.csv", "run,step,loss\nx,1,0.5\nx,2,0.25\n");
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_TRUE(set.runs[0].grad_norm.empty());
  EXPECT_TRUE(set.runs[0].lr.empty());
  EXPECT_EQ(set.runs[0].loss, (std::vector<double>{0.5, 0.25}));
}

TEST(ForecastInput, CsvMalformedCasesNameFileRunAndLine) {
  TempDir dir;
  struct Case {
    const char* text;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"run,step\na,1\n", {"missing column 'loss'", "line 1"}},
      {"", {"is empty"}},
      {"run,step,loss\n", {"holds no runs"}},
      {"run,step,loss\na,1,0.5\na,x,0.4\n", {"run 'a'", "line 3", "step 'x' is not an integer"}},
      {"run,step,loss\na,1,0.5\na,2,abc\n", {"run 'a'", "line 3", "loss 'abc' is not a number"}},
      {"run,step,loss\na,1,0.5\na,2\n", {"run 'a'", "line 3", "2 columns"}},
      {"run,step,loss\na,1,nan\n", {"no run with a finite loss", "run 'a'", "step 1, line 2"}},
      {"run,step,loss\na,1,-0.5\n", {"run 'a'", "line 2", "loss is negative"}},
      {"run,step,loss,lr\na,1,0.5,nan\n", {"run 'a'", "line 2", "lr is NaN"}},
      {"run,step,loss,lr\na,1,0.5,\n", {"run 'a'", "line 2", "lr is empty"}},
      {"run,step,loss\na,1,0.5\na,2,\n", {"run 'a'", "line 3", "loss is empty"}},
      {"run,step,loss\n\"a,1,0.5\n", {"line 2", "quoted field is not closed"}},
      {"run,step,loss,group\na,1,0.5,g1\na,2,0.4,g2\n", {"run 'a'", "line 3", "group 'g2'"}},
      {"run,loss\na,0.5\n", {"missing column 'step'"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].text);
    const auto p = write_text(dir, "bad" + std::to_string(i) + ".csv", cases[i].text);
    auto parts = cases[i].parts;
    parts.push_back(p);
    expect_input_error([&] { read_curves(p, false); }, parts);
  }
}

TEST(ForecastInput, MissingFileAndFolderAreRefused) {
  TempDir dir;
  expect_input_error([&] { read_curves(dir.file("none.csv"), false); },
                     {dir.file("none.csv"), "does not exist"});
  expect_input_error([&] { read_curves(dir.path().string(), false); }, {"is a folder"});
}

TEST(ForecastInput, CsvSkipBadRunsKeepsTheOthers) {
  TempDir dir;
  const auto p = write_text(dir, "c.csv",
                            "run,step,loss\n"
                            "good,1,1.0\n"
                            "bad,1,1.0\n"
                            "good,2,0.9\n"
                            "bad,2,-1\n"
                            "bad,3,0.5\n"
                            "worse,3,1\n"
                            "worse,4\n");
  const auto set = read_curves(p, true);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].id, "good");
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{1, 2}));
  ASSERT_EQ(set.skipped.size(), 2u);
  EXPECT_NE(set.skipped[0].find("run 'bad': line 5: loss is negative"), std::string::npos);
  EXPECT_NE(set.skipped[1].find("run 'worse': line 8"), std::string::npos);
  // Every run bad: still an error, naming the first reason.
  const auto q = write_text(dir, "all_bad.csv", "run,step,loss\na,1,-1\n");
  expect_input_error([&] { read_curves(q, true); }, {"no valid runs", "loss is negative"});
}

bool has_note(const hpt::forecast::CurveSet& set, const std::vector<std::string>& parts) {
  for (const auto& n : set.notes) {
    bool all = true;
    for (const auto& part : parts) all = all && n.find(part) != std::string::npos;
    if (all) return true;
  }
  return false;
}

// Exports as experiment trackers and loggers write them: a byte-order mark, CRLF, columns in
// another order, extra columns, quoted ids with commas, blank lines, no newline at the end.
TEST(ForecastInput, CsvAsRealExportsComeIsRead) {
  TempDir dir;
  const auto p = write_text(dir, "export.csv",
                            "\xEF\xBB\xBF\"step\",epoch,\"run\",lr,loss,wall_time\r\n"
                            "1,0,\"sweep/lr=0.1, bs=32\",0.1,2.5,10.0\r\n"
                            "\r\n"
                            "2,0,\"sweep/lr=0.1, bs=32\",,2.25,11.0\r\n"
                            "3,0,\"sweep/lr=0.1, bs=32\",0.05,2.0,12.0");
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].id, "sweep/lr=0.1, bs=32");
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{1, 2, 3}));
  EXPECT_EQ(set.runs[0].loss, (std::vector<double>{2.5, 2.25, 2.0}));
  EXPECT_EQ(set.runs[0].lr, (std::vector<double>{0.1, 0.1, 0.05}));  // an empty lr keeps the last
  EXPECT_TRUE(has_note(set, {"columns ignored", "'epoch'", "'wall_time'"}));
}

TEST(ForecastInput, CsvStepsAreSortedRepeatsKeepTheirLastRowAndDivergenceEndsACurve) {
  TempDir dir;
  const auto p = write_text(dir, "c.csv",
                            "run,step,loss,grad_norm\n"
                            "a,2,0.5,1\n"
                            "b,1,1,1\n"
                            "a,1,0.6,1\n"
                            "a,3,0.45,1\n"
                            "a,3,0.4,1\n"
                            "a,4,0.3,inf\n"
                            "a,5,nan,1\n"
                            "b,2,0.9,1\n"
                            "b,3,0.8,1\n"
                            "b,4,0.7");  // a partial last line: 3 fields of 4
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{1, 2, 3}));
  EXPECT_EQ(set.runs[0].loss, (std::vector<double>{0.6, 0.5, 0.4}));
  EXPECT_TRUE(set.runs[0].diverged);
  EXPECT_EQ(set.runs[1].steps, (std::vector<long long>{1, 2, 3}));
  EXPECT_FALSE(set.runs[1].diverged);
  EXPECT_TRUE(has_note(set, {"run 'a'", "line 4", "step 1 comes after step 2", "sorted"}));
  EXPECT_TRUE(has_note(set, {"run 'a'", "1 repeated step", "step 3", "last row"}));
  EXPECT_TRUE(has_note(set, {"run 'a' diverged at step 4, line 7", "ends at step 3"}));
  EXPECT_TRUE(has_note(set, {"line 11", "no newline", "ignored"}));
}

TEST(ForecastInput, CsvValidationRowsGroupsAndSingleRunFiles) {
  TempDir dir;
  const auto p = write_text(dir, "c.csv",
                            "run,step,loss,val_loss,group\n"
                            "a,1,1.0,,mlp\n"
                            "a,2,0.9,0.95,mlp\n"
                            "a,3,,0.85,mlp\n"
                            "b,1,2.0,,lm\n");
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{1, 2}));
  EXPECT_EQ(set.runs[0].val_steps, (std::vector<long long>{2, 3}));
  EXPECT_EQ(set.runs[0].val_loss, (std::vector<double>{0.95, 0.85}));
  EXPECT_DOUBLE_EQ(hpt::forecast::validation_at(set.runs[0], 2), 0.95);
  EXPECT_TRUE(std::isnan(hpt::forecast::validation_at(set.runs[0], 1)));
  EXPECT_EQ(set.runs[0].group, "mlp");
  EXPECT_EQ(set.runs[1].group, "lm");
  // Without a run column the file is one run, named after it.
  const auto q = write_text(dir, "only.csv", "step,loss\n1,0.5\n2,0.4\n");
  const auto one = read_curves(q, false);
  ASSERT_EQ(one.runs.size(), 1u);
  EXPECT_EQ(one.runs[0].id, "only");
}

TEST(ForecastInput, Hdf5RunsAreReadSortedById) {
  TempDir dir;
  const auto p = write_h5(dir, "c.h5",
                          {{"r2", {{"step", {0, 1, 2}}, {"loss", {3, 2, 1}}}},
                           {"r1",
                            {{"step", {10, 20}},
                             {"loss", {1.5, 1.25}},
                             {"grad_norm", {4, 3}},
                             {"lr", {0.1, 0.1}},
                             {"val_loss", {kNaN, 1.3}}}}});
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].id, "r1");
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{10, 20}));
  EXPECT_EQ(set.runs[0].loss, (std::vector<double>{1.5, 1.25}));
  EXPECT_EQ(set.runs[0].grad_norm, (std::vector<double>{4, 3}));
  EXPECT_EQ(set.runs[0].val_steps, (std::vector<long long>{20}));  // NaN: not measured at 10
  EXPECT_EQ(set.runs[0].val_loss, (std::vector<double>{1.3}));
  EXPECT_EQ(set.runs[1].id, "r2");
  EXPECT_TRUE(set.runs[1].grad_norm.empty());
  EXPECT_EQ(set.runs[1].loss, (std::vector<double>{3, 2, 1}));
}

TEST(ForecastInput, Hdf5MalformedCasesNameFileRunAndDataset) {
  TempDir dir;
  struct Case {
    Series run;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {{{"loss", {1, 2}}}, {"'/runs/a/step'", "is missing"}},
      {{{"step", {1, 2}}}, {"'/runs/a/loss'", "is missing"}},
      {{{"step", {1, 2}}, {"loss", {1}}}, {"'/runs/a/loss'", "has 1 entries"}},
      {{{"step", {}}, {"loss", {}}}, {"'/runs/a/step'", "is empty"}},
      {{{"step", {1, 2}}, {"loss", {1, 1}}, {"val_step", {1}}, {"val_loss", {1, 1}}},
       {"'/runs/a/val_loss'", "has 2 entries"}},
      {{{"step", {1, 2}}, {"loss", {kInf, 1}}}, {"no run with a finite loss", "entry 0"}},
      {{{"step", {1, 2}}, {"loss", {1, 1}}, {"lr", {0.1, kNaN}}}, {"'/runs/a/lr'", "lr is NaN"}},
      {{{"step", {1, 2}}, {"loss", {1, -1}}}, {"'/runs/a/loss'", "entry 1", "negative"}},
      {{{"step", {1, 2}}, {"loss", {1, 1}}, {"lr", {1}}}, {"'/runs/a/lr'", "has 1 entries"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const auto p = write_h5(dir, "bad" + std::to_string(i) + ".h5", {{"a", cases[i].run}});
    auto parts = cases[i].parts;
    parts.push_back(p);
    parts.push_back("run 'a'");
    expect_input_error([&] { read_curves(p, false); }, parts);
  }
  // No /runs group at all.
  const std::string p = dir.file("empty.h5");
  H5Fclose(H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  expect_input_error([&] { read_curves(p, false); }, {p, "no group '/runs'"});
}

TEST(ForecastInput, Hdf5SkipBadRunsKeepsTheOthers) {
  TempDir dir;
  const auto p = write_h5(dir, "c.h5",
                          {{"ok", {{"step", {1, 2}}, {"loss", {1, 0.5}}}},
                           {"neg", {{"step", {1, 2}}, {"loss", {1, -1}}}}});
  const auto set = read_curves(p, true);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].id, "ok");
  ASSERT_EQ(set.skipped.size(), 1u);
  EXPECT_NE(set.skipped[0].find("run 'neg'"), std::string::npos);
  EXPECT_NE(set.skipped[0].find("negative"), std::string::npos);
}

// The same reading rules as CSV: sorted steps, last of a repeat, divergence, validation at its own
// steps, unknown datasets ignored with a note.
TEST(ForecastInput, Hdf5ReadingRulesMatchCsv) {
  TempDir dir;
  const auto p = write_h5(dir, "c.h5",
                          {{"a",
                            {{"step", {2, 1, 3, 3, 4}},
                             {"loss", {0.5, 0.6, 0.45, 0.4, kNaN}},
                             {"val_step", {3, 1}},
                             {"val_loss", {0.42, 0.7}},
                             {"epoch", {0, 0, 0, 0, 0}}}}});
  const auto set = read_curves(p, false);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].steps, (std::vector<long long>{1, 2, 3}));
  EXPECT_EQ(set.runs[0].loss, (std::vector<double>{0.6, 0.5, 0.4}));
  EXPECT_EQ(set.runs[0].val_steps, (std::vector<long long>{1, 3}));
  EXPECT_EQ(set.runs[0].val_loss, (std::vector<double>{0.7, 0.42}));
  EXPECT_TRUE(set.runs[0].diverged);
  EXPECT_TRUE(has_note(set, {"run 'a'", "entry 1", "sorted"}));
  EXPECT_TRUE(has_note(set, {"run 'a' diverged at step 4"}));
  EXPECT_TRUE(has_note(set, {"dataset 'epoch' ignored"}));
}

}  // namespace
