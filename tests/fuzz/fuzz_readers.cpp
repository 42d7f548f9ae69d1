// hpt_fuzz: a seeded mutation fuzzer of hpt's input readers. It starts from seed inputs (the decks
// in inputs/, and CSV, gzip CSV and HDF5 files it writes itself), mutates them, writes each mutant
// to a file and hands it to the readers in this process:
//   deck      io::read_deck over the app's schema, then what hpt checks before any work
//             (Config::to_ini, app::check_parity_styles, app::estimate_memory_need)
//   csv, h5   io::read_curves (strict and skip_bad_runs)
//   csv       io::LiveSweepReader on the file grown in two parts, as a run's curve and as its plan,
//             then forecast::LiveJudge on what it read (run.mode = watch: no input is refused)
//   gz        io::read_dataset_file("digits")
//   h5        io::read_dataset_file("hdf5"), io::check_model_file, io::load_level_model,
//             io::open_hpt_file (checkpoint)
// hpt::InputError is the expected refusal. Any other exception, a crash, a sanitizer report, an
// HDF5 object left open or a reader taking longer than --timeout seconds is a failure: the input's
// path is printed and the file kept under WORK/failures/. Exit 0 when no input failed, 1 otherwise.
//
//   hpt_fuzz [--seconds N | --inputs N] [--seed S] [--work DIR] [--root REPO] [--start I]
//            [--timeout S] [--max-memory-mb M] [--hdf5-metadata] [--no-huge-shapes]
//            [--kind deck|csv|gz|h5]   inputs of one kind only (a long run per reader)
//   hpt_fuzz --replay FILE...      every reader of each file's kind on it, with their answers
//
// The inputs depend on the seed only (never on time or speed): input I of seed S is the same on
// every machine, so `--seed S --start I --inputs 1` replays one. HDF5 files are mutated in their
// stored values (what the readers check) or truncated, and written structurally wrong (datasets
// missing, of other types, ranks, lengths and values, attributes of the wrong kind, dangling links,
// huge declared shapes unless --no-huge-shapes). Damaging HDF5's own metadata bytes exercises
// libhdf5's decoder more than hpt, which HDF5 does not harden against damaged files: only with
// --hdf5-metadata.
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "app/memory_budget.hpp"
#include "app/parity_styles.hpp"
#include "app/schema.hpp"
#include "core/checksum.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "io/curve_files.hpp"
#include "io/dataset_files.hpp"
#include "io/deck.hpp"
#include "io/dynamics_model_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/level_model_file.hpp"
#include "io/live_sweep_reader.hpp"
#include "forecast/live_judge.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
// A mutated HDF5 shape can make a reader ask for terabytes; the sanitizer then reports the request
// (a failure, the input kept) instead of the machine running out of memory. ASAN_OPTIONS may
// override it.
extern "C" const char* __asan_default_options() {
  return "max_allocation_size_mb=2048";
}
#endif

namespace fs = std::filesystem;

namespace {

#ifndef HPT_SOURCE_DIR
#define HPT_SOURCE_DIR "."
#endif

using Bytes = std::string;  // file contents, text or binary

// ------------------------------------------------------------------------- crash and hang report

// The current input, for the signal handlers: preformatted so that they only call write(), link()
// and _exit(), which are async-signal-safe.
char g_current_path[4096];
char g_keep_path[4096];
const char* volatile g_reader = "";
volatile sig_atomic_t g_reported = 0;

void write_stderr(const char* s) {
  ssize_t ignored = ::write(2, s, std::strlen(s));
  (void)ignored;
}

void report_fatal(const char* what) {
  if (g_reported) return;
  g_reported = 1;
  write_stderr("\nhpt_fuzz: FAILURE (");
  write_stderr(what);
  write_stderr(") in ");
  write_stderr(g_reader);
  write_stderr(" on input ");
  write_stderr(g_current_path);
  if (g_current_path[0] != '\0' && ::link(g_current_path, g_keep_path) == 0) {
    write_stderr(", kept as ");
    write_stderr(g_keep_path);
  }
  write_stderr("\n");
}

extern "C" void on_fatal_signal(int sig) {
  report_fatal(sig == SIGALRM   ? "a reader took longer than the time limit (hang)"
               : sig == SIGABRT ? "abort: a sanitizer report or a failed assertion"
               : sig == SIGSEGV ? "segmentation fault"
               : sig == SIGBUS  ? "bus error"
               : sig == SIGFPE  ? "arithmetic exception"
                                : "illegal instruction");
  if (sig == SIGALRM) _exit(1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

#if defined(__SANITIZE_ADDRESS__)
extern "C" void on_sanitizer_death() {
  report_fatal("sanitizer report");
}
#endif

void install_handlers() {
  // Under AddressSanitizer its own handlers report a crash (with the stack) and then abort or exit:
  // only SIGABRT and the death callback are ours there.
  std::vector<int> signals{SIGABRT, SIGALRM};
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(on_sanitizer_death);
#else
  signals.insert(signals.end(), {SIGSEGV, SIGBUS, SIGFPE, SIGILL});
#endif
  for (int sig : signals) {
    struct sigaction sa = {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

void set_current(const std::string& path, const std::string& keep) {
  std::snprintf(g_current_path, sizeof g_current_path, "%s", path.c_str());
  std::snprintf(g_keep_path, sizeof g_keep_path, "%s", keep.c_str());
}

// ------------------------------------------------------------------------- files

void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Bytes gzip(const Bytes& text) {
  uLongf size = compressBound(uLong(text.size())) + 64;
  Bytes out;
  z_stream z = {};
  deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // gzip framing
  out.resize(size);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = uInt(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// ------------------------------------------------------------------------- HDF5 writing

// Writing HDF5 seeds and structural mutants with the C API. Modification times are not stored, so a
// file's bytes depend on its contents only (the byte mutations of a seed are then reproducible).
class H5Writer {
 public:
  explicit H5Writer(const std::string& path) {
    fcpl_ = H5Pcreate(H5P_FILE_CREATE);
    file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl_, H5P_DEFAULT);
    if (file_ < 0) throw std::runtime_error("cannot create HDF5 file '" + path + "'");
    gcpl_ = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl_, false);
  }
  ~H5Writer() {
    H5Pclose(gcpl_);
    H5Pclose(fcpl_);
    H5Fclose(file_);
  }
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  hid_t file() const { return file_; }

  hid_t group(const std::string& path) {  // creates missing parents; the caller closes it
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t g = -1;
    H5E_BEGIN_TRY {
      g = H5Gcreate2(file_, path.c_str(), lcpl, gcpl_, H5P_DEFAULT);
    }
    H5E_END_TRY;
    H5Pclose(lcpl);
    return g;
  }

  // A dataset of file type `ftype` and shape `dims`, written from `data` (memory type `mtype`)
  // unless data is null (then only HDF5's fill value: a huge shape costs nothing). Chunked when
  // `chunked`.
  void dataset(const std::string& path, hid_t ftype, hid_t mtype, const std::vector<hsize_t>& dims,
               const void* data, bool chunked = false) {
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, false);
    std::vector<hsize_t> maxdims(dims.size(), H5S_UNLIMITED);
    hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                               : H5Screate_simple(int(dims.size()), dims.data(),
                                                  chunked ? maxdims.data() : nullptr);
    if (chunked && !dims.empty()) {
      std::vector<hsize_t> chunk(dims.size(), 1);
      chunk.back() = std::max<hsize_t>(1, std::min<hsize_t>(dims.back(), 64));
      H5Pset_chunk(dcpl, int(chunk.size()), chunk.data());
    }
    hid_t d = -1;
    H5E_BEGIN_TRY {
      d = H5Dcreate2(file_, path.c_str(), ftype, space, lcpl, dcpl, H5P_DEFAULT);
      if (d >= 0 && data != nullptr) H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    }
    H5E_END_TRY;
    if (d >= 0) H5Dclose(d);
    H5Sclose(space);
    H5Pclose(dcpl);
    H5Pclose(lcpl);
  }

  template <class T>
  void values(const std::string& path, hid_t ftype, hid_t mtype, const std::vector<T>& v,
              std::vector<hsize_t> dims = {}) {
    if (dims.empty()) dims = {hsize_t(v.size())};
    dataset(path, ftype, mtype, dims, v.empty() ? nullptr : v.data());
  }

  void string_dataset(const std::string& path, const std::string& value) {
    hid_t t = string_type(value.size());
    dataset(path, t, t, {1}, value.c_str());
    H5Tclose(t);
  }

  static hid_t string_type(std::size_t size) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, std::max<std::size_t>(1, size));
    return t;
  }

  // Attributes on the object at `path` ("/" for the root).
  void string_attr(const std::string& path, const std::string& name, const std::string& value) {
    hid_t t = string_type(value.size());
    attr(path, name, t, t, {}, value.c_str());
    H5Tclose(t);
  }
  void int_attr(const std::string& path, const std::string& name, std::int64_t v) {
    attr(path, name, H5T_STD_I64LE, H5T_NATIVE_INT64, {}, &v);
  }
  void double_attr(const std::string& path, const std::string& name, double v) {
    attr(path, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {}, &v);
  }
  void attr(const std::string& path, const std::string& name, hid_t ftype, hid_t mtype,
            const std::vector<hsize_t>& dims, const void* data) {
    hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                               : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    H5E_BEGIN_TRY {
      if (H5Aexists_by_name(file_, path.c_str(), name.c_str(), H5P_DEFAULT) > 0)
        H5Adelete_by_name(file_, path.c_str(), name.c_str(), H5P_DEFAULT);
      hid_t a = H5Acreate_by_name(file_, path.c_str(), name.c_str(), ftype, space, H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT);
      if (a >= 0) {
        H5Awrite(a, mtype, data);
        H5Aclose(a);
      }
    }
    H5E_END_TRY;
    H5Sclose(space);
  }

 private:
  hid_t file_ = -1, fcpl_ = -1, gcpl_ = -1;
};

void write_hpt_header(H5Writer& w, const std::string& kind) {
  w.int_attr("/", "hpt_format_version", hpt::io::kHptFormatVersion);
  w.string_attr("/", "hpt_kind", kind);
  w.string_attr("/", "hpt_version", "fuzz");
  w.string_attr("/", "hpt_backend", "Serial");
  w.string_attr("/", "hpt_precision", "float");
  w.string_attr("/", "hpt_deck", "[run]\nmode = rollout\n");
}

// ------------------------------------------------------------------------- seeds

enum class Kind { Deck, Csv, Gz, H5 };
const char* const kKindNames[] = {"deck", "csv", "gz", "h5"};
const char* const kKindExt[] = {".ini", ".csv", ".csv.gz", ".h5"};

struct Seed {
  Kind kind;
  std::string name;
  Bytes bytes;  // gz: the uncompressed text
  // h5: byte ranges of the datasets' stored values (contiguous datasets), where mutations reach the
  // readers' checks instead of HDF5's metadata decoder.
  std::vector<std::pair<std::size_t, std::size_t>> data_ranges;
};

std::string csv_curves_seed() {
  std::ostringstream s;
  s << "run,step,loss,lr,grad_norm,val_loss,group\n";
  for (int step = 0; step < 12; ++step)
    for (int r = 0; r < 3; ++r) {
      s << (r == 2 ? "\"run, c\"" : std::string("run") + char('a' + r)) << ',' << step * 10 << ','
        << 2.5 / (1 + step + r) << ',' << (step < 6 ? 0.1 : 0.01) << ',';
      if (!(r == 1 && step == 4)) s << 1.0 + 0.1 * step;
      s << ',';
      if (step % 4 == 0) s << 2.6 / (1 + step + r);
      s << ',' << (r < 2 ? "sweep" : "other") << '\n';
    }
  return s.str();
}

std::string csv_minimal_seed() {
  std::ostringstream s;
  s << "\xEF\xBB\xBFstep,loss\r\n";
  for (int step = 1; step <= 20; ++step) s << step << ',' << 1.0 / step << "\r\n";
  s << "21,0.04";  // a last line without its newline
  return s.str();
}

std::string csv_val_seed() {
  return "run,step,val_loss,loss,extra\nx,0,,1.5,a\nx,5,1.2,1.1,b\nx,10,,0.9,c\ny,0,nan,inf,d\n"
         "y,1,,1e-3,e\n";
}

std::string digits_seed() {
  std::ostringstream s;
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 6; ++c) s << (r * 3 + c) % 16 << ',';
    s << r % 3 << '\n';
  }
  return s.str();
}

// The stored values' byte ranges of every contiguous dataset in an HDF5 file.
std::vector<std::pair<std::size_t, std::size_t>> data_ranges(const std::string& path) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return out;
  H5Ovisit(
      f, H5_INDEX_NAME, H5_ITER_NATIVE,
      [](hid_t obj, const char* name, const H5O_info_t* info, void* op) -> herr_t {
        if (info->type != H5O_TYPE_DATASET) return 0;
        hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
        if (d < 0) return 0;
        const haddr_t offset = H5Dget_offset(d);
        const hsize_t size = H5Dget_storage_size(d);
        if (offset != HADDR_UNDEF && size > 0)
          static_cast<std::vector<std::pair<std::size_t, std::size_t>>*>(op)->emplace_back(
              std::size_t(offset), std::size_t(size));
        H5Dclose(d);
        return 0;
      },
      &out);
  H5Fclose(f);
  return out;
}

void write_curves_h5(const std::string& path) {
  H5Writer w(path);
  std::vector<std::int64_t> steps;
  std::vector<double> loss, lr;
  std::vector<float> grad;
  for (int i = 0; i < 16; ++i) {
    steps.push_back(5 * i);
    loss.push_back(3.0 / (1 + i));
    lr.push_back(i < 8 ? 0.1 : 0.05);
    grad.push_back(float(1 + 0.5 * i));
  }
  w.values("/runs/a/step", H5T_STD_I64LE, H5T_NATIVE_INT64, steps);
  w.values("/runs/a/loss", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, loss);
  w.values("/runs/a/lr", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, lr);
  w.values("/runs/a/grad_norm", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, grad);
  std::vector<int> steps32(steps.begin(), steps.end());
  std::vector<float> loss32(loss.begin(), loss.end());
  w.values("/runs/b/step", H5T_STD_I32LE, H5T_NATIVE_INT, steps32);
  w.values("/runs/b/loss", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, loss32);
  w.values("/runs/b/val_step", H5T_STD_I64LE, H5T_NATIVE_INT64,
           std::vector<std::int64_t>{0, 20, 40, 60});
  w.values("/runs/b/val_loss", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
           std::vector<double>{3.1, 0.9, 0.5, 0.3});
  w.values("/runs/b/extra", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, loss);
  w.string_attr("/runs/b", "id", "run/b with a slash");
  w.string_attr("/runs/b", "group", "sweep");
}

void write_xy_h5(const std::string& path, bool regression) {
  H5Writer w(path);
  std::vector<float> x;
  for (int i = 0; i < 8 * 4; ++i) x.push_back(0.25f * float(i) - 2.0f);
  w.values("/X", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, x, {8, 4});
  if (regression) {
    std::vector<double> y;
    for (int i = 0; i < 8 * 2; ++i) y.push_back(0.5 * i);
    w.values("/y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, y, {8, 2});
  } else {
    w.values("/y", H5T_STD_I64LE, H5T_NATIVE_INT64,
             std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 0, 1});
  }
}

// A level model file as io::save_level_model writes it (weights of a few distinct values).
void write_level_model_h5(const std::string& path) {
  hpt::forecast::LevelModel m;
  for (int j = 0; j < hpt::forecast::kLevelFeatures; ++j) {
    m.median.push_back(0.01 * j);
    m.q05.push_back(-0.1 - 0.01 * j);
    m.q95.push_back(0.1 + 0.02 * j);
  }
  m.corpus = "fuzz seed";
  m.runs = 3;
  m.samples = 100;
  m.horizons = {10, 50};
  hpt::io::save_level_model(m, path, "");
}

// A dynamics model file as io::save_model_file writes it, with its checksum, for the sizes of the
// schema's defaults (so check_model_file accepts the seed and mutants reach its every check).
void write_model_h5(const std::string& path, const hpt::Config& defaults) {
  H5Writer w(path);
  write_hpt_header(w, "model");
  hid_t g = w.group("/dynamics");
  H5Gclose(g);
  w.string_attr("/dynamics", "style", "rssm");
  w.int_attr("/dynamics", "members", defaults.get_int("dynamics.members"));
  w.int_attr("/dynamics", "hidden", defaults.get_int("dynamics.hidden"));
  w.int_attr("/dynamics", "stochastic", defaults.get_int("dynamics.stochastic"));
  w.int_attr("/dynamics", "input", 64);
  w.string_attr("/dynamics", "gru_reset", defaults.get_string("gru.reset"));
  std::map<std::string, std::vector<double>> tensors;
  tensors["w_in"] = {0.5, -0.25, 0.125, 1.0, 2.0, -1.0};
  tensors["bias"] = {0.0, 0.375, -0.0625};  // exact in float32, as the checksum reads them back
  for (const auto& [name, v] : tensors) {
    std::vector<float> f(v.begin(), v.end());
    const std::vector<hsize_t> dims =
        v.size() == 6 ? std::vector<hsize_t>{2, 3} : std::vector<hsize_t>{v.size()};
    w.values("/dynamics/" + name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, f, dims);
  }
  std::uint64_t h = hpt::kChecksumStart;
  for (const auto& [name, v] : tensors) {
    h = hpt::fnv1a(h, name.data(), name.size());
    h = hpt::fnv1a(h, v.data(), v.size() * sizeof(double));
  }
  w.int_attr("/dynamics", "checksum", std::int64_t(h));
}

void write_checkpoint_h5(const std::string& path) {
  H5Writer w(path);
  write_hpt_header(w, "checkpoint");
  w.int_attr("/", "step", 40);
  w.values("/model/params", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, std::vector<float>{1, 2, 3, 4});
}

// ------------------------------------------------------------------------- mutations

class Mutator {
 public:
  Mutator(std::mt19937_64& rng, const std::vector<std::string>& dictionary)
      : rng_(rng), dict_(dictionary) {}

  std::size_t below(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  // One mutation of text (a deck or a CSV file), `other` a second seed of the same kind to splice.
  void text(Bytes& s, const Bytes& other) {
    switch (below(14)) {
      case 0:
        flip_bit(s);
        break;
      case 1:
        set_byte(s, special_char());
        break;
      case 2:
        insert(s, below(s.size() + 1), std::string(1 + below(3), special_char()));
        break;
      case 3:
        delete_chunk(s);
        break;
      case 4:
        duplicate_chunk(s);
        break;
      case 5:
        splice(s, other, true);
        break;
      case 6:
      case 7:
        replace_number(s);
        break;
      case 8:
        replace_word(s);
        break;
      case 9:
        long_line(s);
        break;
      case 10:
        line_op(s, other);
        break;
      case 11:
        insert(s, below(s.size() + 1), dict_.empty() ? "=" : dict_[below(dict_.size())]);
        break;
      case 12:
        truncate(s);
        break;
      default:
        empty_value(s);
        break;
    }
  }

  // One mutation of binary data, at an offset drawn from `ranges` when given.
  void binary(Bytes& s, const Bytes& other,
              const std::vector<std::pair<std::size_t, std::size_t>>& ranges, bool any_byte) {
    if (s.empty()) return;
    std::size_t at = below(s.size());
    if (!ranges.empty() && !(any_byte && chance(0.5))) {
      const auto& r = ranges[below(ranges.size())];
      at = std::min(s.size() - 1, r.first + below(r.second));
    }
    // Without any_byte: the stored values changed in place, or the file truncated (as a file still
    // being written, or a full disk, leaves it).
    unsigned op = unsigned(below(any_byte ? 9 : 6));
    if (!any_byte && op == 5) op = 8;
    switch (op) {
      case 0:
        s[at] = char(s[at] ^ char(1u << below(8)));
        break;
      case 1:
        s[at] = char(kBytes[below(sizeof kBytes)]);
        break;
      case 2:
        overwrite_value(s, at);
        break;
      case 3:
        overwrite_value(s, at);
        break;
      case 4:
        s[at] = char(below(256));
        break;
      case 5:
        s.insert(at, std::string(1 + below(8), char(below(256))));
        break;
      case 6:
        s.erase(at, 1 + below(16));
        break;
      case 7:
        splice(s, other, false);
        break;
      default:
        s.resize(below(s.size()));
        break;  // truncated
    }
  }

 private:
  static constexpr unsigned char kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x20, 0x0a};

  char special_char() {
    static const char chars[] = "\n\r\t =,[]\"#;.\\-+eE0\x01\x7f\xff";
    return chars[below(sizeof chars - 1)];
  }
  void flip_bit(Bytes& s) {
    if (!s.empty()) s[below(s.size())] ^= char(1u << below(8));
  }
  void set_byte(Bytes& s, char c) {
    if (!s.empty()) s[below(s.size())] = c;
  }
  void insert(Bytes& s, std::size_t at, const std::string& what) { s.insert(at, what); }
  void delete_chunk(Bytes& s) {
    if (s.empty()) return;
    const std::size_t at = below(s.size());
    s.erase(at, 1 + below(std::min<std::size_t>(64, s.size() - at)));
  }
  void duplicate_chunk(Bytes& s) {
    if (s.empty()) return;
    const std::size_t at = below(s.size());
    const std::string chunk = s.substr(at, 1 + below(128));
    s.insert(below(s.size() + 1), chunk);
  }
  // The head of `s` and the tail of `other` (at line boundaries for text).
  void splice(Bytes& s, const Bytes& other, bool lines) {
    std::size_t a = below(s.size() + 1), b = below(other.size() + 1);
    if (lines) {
      a = s.rfind('\n', a), b = other.rfind('\n', b);
      a = a == std::string::npos ? 0 : a + 1, b = b == std::string::npos ? 0 : b + 1;
    } else {
      b = std::min(a, other.size());
    }
    s = s.substr(0, a) + other.substr(b);
  }
  std::string extreme_number() {
    // '|'-separated: " 7 " and "1,5" are values too.
    static const std::vector<std::string> values = split(
        "1e308|-1e308|1e309|-1|0|-0|nan|NaN|-nan|inf|-inf|Infinity|99999999999999999999|-"
        "99999999999999999999|9223372036854775807|9223372036854775808|-9223372036854775808|"
        "2147483648|4294967296|-2147483649|1e-320|4.9e-324|0x10|1e|+|.|1.5.2|1,5| 7 "
        "|007|1e18|4611686018427387904|18446744073709551616|0.1e400|-0.0");
    if (chance(0.05)) return std::string(1 + below(400), char('1' + below(9)));  // long digits
    return values[below(values.size())];
  }
  static std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::size_t b = 0;
    for (std::size_t e; (e = text.find('|', b)) != std::string::npos; b = e + 1)
      out.push_back(text.substr(b, e - b));
    out.push_back(text.substr(b));
    return out;
  }
  // A number (digits, sign, point, exponent) or a value after '=' or ',' replaced by an extreme.
  void replace_number(Bytes& s) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const bool digit = std::isdigit((unsigned char)s[i]) != 0;
      if (digit && (i == 0 || (!std::isalnum((unsigned char)s[i - 1]) && s[i - 1] != '.')))
        starts.push_back(i);
    }
    if (starts.empty()) return insert(s, below(s.size() + 1), extreme_number());
    std::size_t b = starts[below(starts.size())], e = b;
    if (b > 0 && (s[b - 1] == '-' || s[b - 1] == '+')) --b;
    while (e < s.size() &&
           (std::isalnum((unsigned char)s[e]) || s[e] == '.' || s[e] == '-' || s[e] == '+'))
      ++e;
    s.replace(b, e - b, extreme_number());
  }
  // A word (key, section, style name, value) replaced by a word of the dictionary.
  void replace_word(Bytes& s) {
    if (s.empty() || dict_.empty()) return;
    std::size_t b = below(s.size());
    while (b > 0 && (std::isalnum((unsigned char)s[b - 1]) || s[b - 1] == '_')) --b;
    std::size_t e = b;
    while (e < s.size() && (std::isalnum((unsigned char)s[e]) || s[e] == '_')) ++e;
    s.replace(b, e - b, dict_[below(dict_.size())]);
  }
  // The value after a '=' or ',' emptied.
  void empty_value(Bytes& s) {
    const std::size_t at = s.find_first_of("=,", below(s.size()));
    if (at == std::string::npos) return;
    const std::size_t end = s.find_first_of(",\n", at + 1);
    s.erase(at + 1, (end == std::string::npos ? s.size() : end) - at - 1);
  }
  void long_line(Bytes& s) {
    static const char* const fill[] = {"a", "9", " ", "=", ",", "[", "x.y", "\""};
    const std::size_t n = std::size_t(1) << (10 + below(8));  // 1 KiB .. 128 KiB
    std::string line;
    const std::string f = fill[below(sizeof fill / sizeof fill[0])];
    while (line.size() < n) line += f;
    if (chance(0.5)) line = "key = " + line;
    insert(s, line_start(s, below(s.size() + 1)), line + "\n");
  }
  std::size_t line_start(const Bytes& s, std::size_t at) {
    const std::size_t p = at == 0 ? std::string::npos : s.rfind('\n', at - 1);
    return p == std::string::npos ? 0 : p + 1;
  }
  std::vector<std::string> lines(const Bytes& s) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (b < s.size()) {
      std::size_t e = s.find('\n', b);
      e = e == std::string::npos ? s.size() : e + 1;
      out.push_back(s.substr(b, e - b));
      b = e;
    }
    return out;
  }
  // Delete, duplicate or swap lines, or insert a line of the other seed.
  void line_op(Bytes& s, const Bytes& other) {
    std::vector<std::string> l = lines(s);
    if (l.empty()) return;
    const std::size_t i = below(l.size()), j = below(l.size());
    switch (below(5)) {
      case 0:
        l.erase(l.begin() + long(i));
        break;
      case 1:
        l.insert(l.begin() + long(j), l[i]);
        break;
      case 2:
        std::swap(l[i], l[j]);
        break;
      case 3: {
        const std::vector<std::string> o = lines(other);
        if (!o.empty()) l.insert(l.begin() + long(j), o[below(o.size())]);
        break;
      }
      default:  // CRLF line ends, or a BOM
        if (chance(0.5))
          for (auto& x : l)
            if (!x.empty() && x.back() == '\n') x.insert(x.size() - 1, "\r");
        if (!l.empty()) l[0] = "\xEF\xBB\xBF" + l[0];
    }
    s.clear();
    for (const auto& x : l) s += x;
  }
  void truncate(Bytes& s) { s.resize(below(s.size() + 1)); }
  // An 8-, 4- or 2-byte value at `at` overwritten with an extreme (as the stored integers and
  // floats of a dataset are).
  void overwrite_value(Bytes& s, std::size_t at) {
    static const std::uint64_t values[] = {
        0x7ff8000000000000ULL,  // NaN (double)
        0x7ff0000000000000ULL,  // +inf
        0xfff0000000000000ULL,  // -inf
        0x7fefffffffffffffULL,  // DBL_MAX
        0xbff0000000000000ULL,  // -1.0
        0x8000000000000000ULL,  // INT64_MIN, -0.0
        0x7fffffffffffffffULL,  // INT64_MAX
        0xffffffffffffffffULL,  // -1
        0x000000007fc00000ULL,  // NaN (float)
        0x000000007f800000ULL,  // +inf (float)
        0x00000000ff800000ULL,  // -inf (float)
        0x0000000080000000ULL,  // INT32_MIN
        0x000000007fffffffULL,  // INT32_MAX
        0x0000000000000000ULL, 0x0000000000000001ULL,
    };
    const std::uint64_t v = values[below(sizeof values / sizeof values[0])];
    const std::size_t width = std::size_t(1) << (1 + below(3));  // 2, 4 or 8 bytes
    for (std::size_t k = 0; k < width && at + k < s.size(); ++k) s[at + k] = char(v >> (8 * k));
  }

  std::mt19937_64& rng_;
  const std::vector<std::string>& dict_;
};

// ------------------------------------------------------------------------- structural HDF5 mutants

// Writes an HDF5 file that one of the readers expects, with a few of its parts wrong: a dataset
// missing, of another element type (int8, uint64, string), rank or length, holding NaN, infinities,
// negative, huge or non-integer values, a huge declared shape (chunked, nothing stored), a group
// where a dataset belongs, an attribute of the wrong kind, a dangling link.
class StructuralH5 {
 public:
  StructuralH5(Mutator& m, const hpt::Config& defaults, bool huge_shapes)
      : m_(m), defaults_(defaults), huge_(huge_shapes) {}

  void write(const std::string& path) {
    H5Writer w(path);
    switch (m_.below(4)) {
      case 0:
        curves(w);
        break;
      case 1:
        xy(w);
        break;
      case 2:
        model(w);
        break;
      default:
        checkpoint(w);
        break;
    }
    if (m_.chance(0.1)) w.string_dataset("/" + name(), "stray");
  }

 private:
  std::string name() {
    static const char* const names[] = {
        "a",        "b",        "runs",      "X",        "y", "step",       "loss", "lr",
        "val_step", "val_loss", "grad_norm", "dynamics", "w", "with space", "ü",    "."};
    return names[m_.below(sizeof names / sizeof names[0])];
  }
  double odd_value() {
    static const double values[] = {std::nan(""), INFINITY, -INFINITY, -1.0,
                                    0.0,          1e308,    -1e308,    0.5,
                                    1e19,         -1e19,    4.9e-324,  2147483648.0};
    return values[m_.below(sizeof values / sizeof values[0])];
  }
  std::vector<double> series(std::size_t n, bool increasing) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = increasing ? double(3 * i) : 1.0 / double(1 + i);
    for (int k = int(m_.below(3)); k > 0 && n > 0; --k) v[m_.below(n)] = odd_value();
    if (m_.chance(0.1) && n > 1) std::reverse(v.begin(), v.end());
    return v;
  }
  // A 1-D (or, at times, another rank) numeric dataset of `n` values in a random element type.
  void numeric(H5Writer& w, const std::string& path, std::vector<double> v,
               std::vector<hsize_t> dims = {}) {
    if (dims.empty()) dims = {hsize_t(v.size())};
    const unsigned shape_change = unsigned(m_.below(12));
    if (shape_change == 0) dims = {};                         // scalar
    if (shape_change == 1) dims.push_back(1);                 // one more rank
    if (shape_change == 2 && !dims.empty()) dims.back() = 0;  // empty
    if (shape_change == 3 && huge_) {                         // huge, nothing stored
      dims = {hsize_t(1) << (20 + m_.below(24))};
      if (m_.chance(0.5)) dims.push_back(hsize_t(1) << m_.below(20));
      w.dataset(path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, nullptr, true);
      return;
    }
    std::size_t count = 1;
    for (hsize_t d : dims) count *= std::size_t(d);
    v.resize(count, 1.0);
    switch (m_.below(8)) {
      case 0: {
        std::vector<float> f(v.begin(), v.end());
        w.dataset(path, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, f.data(), m_.chance(0.2));
        break;
      }
      case 1: {
        std::vector<std::int64_t> i;
        for (double x : v)
          i.push_back(std::isfinite(x) && std::abs(x) < 9e18 ? std::int64_t(x) : -1);
        w.dataset(path, H5T_STD_I64LE, H5T_NATIVE_INT64, dims, i.data());
        break;
      }
      case 2: {
        std::vector<std::int8_t> i;
        for (double x : v) i.push_back(std::int8_t(std::isfinite(x) ? std::fmod(x, 100) : -1));
        w.dataset(path, H5T_STD_I8LE, H5T_NATIVE_INT8, dims, i.data());
        break;
      }
      case 3: {
        std::vector<std::uint64_t> i;
        for (double x : v)
          i.push_back(std::isfinite(x) && x >= 0 && x < 1e19 ? std::uint64_t(x) : ~0ULL);
        w.dataset(path, H5T_STD_U64LE, H5T_NATIVE_UINT64, dims, i.data());
        break;
      }
      case 4:
        w.string_dataset(path, "1.5");
        break;
      case 5: {
        std::vector<double> be(v);
        w.dataset(path, H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, dims, be.data());
        break;
      }
      default:
        w.dataset(path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, v.data(), m_.chance(0.2));
    }
  }
  // A part present as it should be (most of the time), or missing, or a group, or a dangling link.
  bool present(H5Writer& w, const std::string& path) {
    const unsigned r = unsigned(m_.below(20));
    if (r == 0) return false;
    if (r == 1) {
      hid_t g = w.group(path);
      if (g >= 0) H5Gclose(g);
      return false;
    }
    if (r == 2) {
      H5E_BEGIN_TRY {
        H5Lcreate_soft("/nowhere", w.file(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
      }
      H5E_END_TRY;
      return false;
    }
    if (r == 3) {
      H5E_BEGIN_TRY {
        H5Lcreate_external("missing.h5", "/x", w.file(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
      }
      H5E_END_TRY;
      return false;
    }
    return true;
  }
  void string_or_other(H5Writer& w, const std::string& obj, const std::string& attr,
                       const std::string& value) {
    switch (m_.below(10)) {
      case 0:
        return;  // missing
      case 1:
        w.int_attr(obj, attr, 7);
        return;
      case 2:
        w.string_attr(obj, attr, "");
        return;
      case 3:
        w.string_attr(obj, attr, std::string(1 + m_.below(5000), 'x'));
        return;
      default:
        w.string_attr(obj, attr, value);
    }
  }
  void int_or_other(H5Writer& w, const std::string& obj, const std::string& attr, std::int64_t v) {
    switch (m_.below(12)) {
      case 0:
        return;
      case 1:
        w.string_attr(obj, attr, std::to_string(v));
        return;
      case 2:
        w.double_attr(obj, attr, odd_value());
        return;
      case 3:
        w.int_attr(obj, attr, INT64_MIN);
        return;
      case 4:
        w.int_attr(obj, attr, INT64_MAX);
        return;
      case 5:
        w.int_attr(obj, attr, -1);
        return;
      case 6: {
        const std::int64_t vec[3] = {v, v, v};
        const hsize_t n = 3;
        w.attr(obj, attr, H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, vec);
        return;
      }
      default:
        w.int_attr(obj, attr, v);
    }
  }

  void curves(H5Writer& w) {
    const std::size_t runs = m_.below(4);
    for (std::size_t r = 0; r < runs; ++r) {
      const std::string g = "/runs/" + (m_.chance(0.2) ? name() : "r" + std::to_string(r));
      const std::size_t n = m_.chance(0.1) ? 0 : 1 + m_.below(40);
      const std::size_t other = m_.chance(0.15) ? n + 1 : n;
      if (present(w, g + "/step")) numeric(w, g + "/step", series(n, true));
      if (present(w, g + "/loss")) numeric(w, g + "/loss", series(other, false));
      if (m_.chance(0.5) && present(w, g + "/lr")) numeric(w, g + "/lr", series(n, false));
      if (m_.chance(0.5) && present(w, g + "/grad_norm"))
        numeric(w, g + "/grad_norm", series(m_.chance(0.9) ? n : other, false));
      if (m_.chance(0.3) && present(w, g + "/val_step"))
        numeric(w, g + "/val_step", series(3, true));
      if (m_.chance(0.4) && present(w, g + "/val_loss"))
        numeric(w, g + "/val_loss", series(m_.chance(0.5) ? 3 : n, false));
      if (m_.chance(0.2)) string_or_other(w, g, "id", name());
      if (m_.chance(0.2)) string_or_other(w, g, "group", name());
    }
    if (runs == 0 && m_.chance(0.5)) {
      hid_t g = w.group("/runs");
      if (g >= 0) H5Gclose(g);
    }
  }
  void xy(H5Writer& w) {
    const std::size_t n = m_.chance(0.05) ? 0 : 1 + m_.below(20), f = 1 + m_.below(6);
    const std::size_t yn = m_.chance(0.1) ? n + 1 : n;
    if (present(w, "/X")) numeric(w, "/X", series(n * f, false), {n, f});
    if (present(w, "/y")) {
      if (m_.chance(0.5)) {
        std::vector<double> y(yn);
        for (std::size_t i = 0; i < yn; ++i) y[i] = double(i % 3);
        if (m_.chance(0.3) && yn > 0) y[m_.below(yn)] = odd_value();
        numeric(w, "/y", y);
      } else if (huge_ && m_.chance(0.05)) {  // more target columns than an int holds
        w.dataset("/y", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {yn, (hsize_t(1) << 32) + m_.below(3)},
                  nullptr, true);
      } else {
        const std::size_t k = 1 + m_.below(3);
        numeric(w, "/y", series(yn * k, false), {yn, k});
      }
    }
  }
  void model(H5Writer& w) {
    if (m_.chance(0.9)) write_hpt_header(w, m_.chance(0.9) ? "model" : "checkpoint");
    if (m_.chance(0.1)) int_or_other(w, "/", "hpt_format_version", 1);
    if (!present(w, "/dynamics/w")) return;
    numeric(w, "/dynamics/w", series(6, false), {2, 3});
    if (m_.chance(0.5)) numeric(w, "/dynamics/b", series(3, false));
    int_or_other(w, "/dynamics", "members", defaults_.get_int("dynamics.members"));
    int_or_other(w, "/dynamics", "hidden", defaults_.get_int("dynamics.hidden"));
    int_or_other(w, "/dynamics", "stochastic", defaults_.get_int("dynamics.stochastic"));
    string_or_other(w, "/dynamics", "gru_reset", defaults_.get_string("gru.reset"));
    int_or_other(w, "/dynamics", "checksum", std::int64_t(m_.below(1000)));
  }
  void checkpoint(H5Writer& w) {
    int_or_other(w, "/", "hpt_format_version", 1);
    string_or_other(w, "/", "hpt_kind", m_.chance(0.7) ? "checkpoint" : "model");
    if (m_.chance(0.5)) string_or_other(w, "/", "hpt_version", "fuzz");
    if (m_.chance(0.5)) string_or_other(w, "/", "hpt_deck", "[run]\n");
  }

  Mutator& m_;
  const hpt::Config& defaults_;
  bool huge_;
};

// ------------------------------------------------------------------------- readers

// run.mode = watch on `path`: its first half, then the whole, as the growing curve file of a run
// (and the same bytes as a wide file's and as the run's plan), judged by the shipped level model.
// The live reader notes what it cannot read and never refuses: any exception is a failure.
void read_as_live_sweep(const std::string& path, const std::string& folder,
                        const hpt::forecast::LevelModel& model) {
  fs::remove_all(folder);
  fs::create_directories(folder);
  const Bytes bytes = read_file(path);
  const std::size_t half = bytes.size() / 2;
  write_file(folder + "/run.csv", Bytes(bytes.begin(), bytes.begin() + long(half)));
  hpt::io::LiveSweepReader reader(folder);
  reader.poll(0);
  std::ofstream(folder + "/run.csv", std::ios::app | std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data() + half),
             std::streamsize(bytes.size() - half));
  write_file(folder + "/run.lr", bytes);
  reader.poll(1);
  hpt::forecast::LiveJudgeSettings s;
  s.final_step = 100, s.every = 1, s.model = model, s.rungs = {0.25, 0.5};
  hpt::forecast::LiveJudge judge(s);
  std::vector<int> stopped;
  judge.poll(reader.runs(), 2, stopped);
}

struct Reader {
  std::string name;
  std::function<void(const std::string&)> read;
  long accepted = 0, refused = 0, failed = 0;
  long out_of_memory = 0;  // of the refused
};

struct Options {
  double seconds = 0;
  long inputs = 0;
  std::uint64_t seed = 1;
  long start = 0;
  std::string work, root = HPT_SOURCE_DIR;
  unsigned timeout = 10;
  long max_memory_mb = 2048;
  bool hdf5_metadata = false;
  // Datasets declaring up to 2^62 entries (chunked, nothing stored), which the readers allocate:
  // std::bad_alloc beyond --max-memory-mb, which hpt reports as bad input. AddressSanitizer ends
  // the process at any allocation it cannot serve, even one whose std::bad_alloc would be caught,
  // so they are left out of a sanitizer build unless --huge-shapes.
#if defined(__SANITIZE_ADDRESS__)
  bool huge_shapes = false;
#else
  bool huge_shapes = true;
#endif
  std::vector<std::string> replay;
  int only_kind = -1;  // --kind: inputs of one kind only (deck, csv, gz, h5), else all four
};

void usage(const char* argv0) {
  std::cout
      << "usage: " << argv0
      << " [--seconds N | --inputs N] [--seed S] [--work DIR] [--root REPO] [--start I]\n"
         "         [--timeout SECONDS] [--max-memory-mb M] [--hdf5-metadata] [--[no-]huge-shapes]\n"
         "         [--kind deck|csv|gz|h5]\n"
         "       "
      << argv0
      << " --replay FILE...\n"
         "Feeds mutated decks, curve files (CSV, HDF5) and data set files to hpt's readers; a\n"
         "failing input is kept in WORK/failures. Defaults: --seconds 60 --seed 1 --timeout 10\n"
         "--max-memory-mb 2048 --work /tmp/hpt_fuzz.<pid> --root " HPT_SOURCE_DIR
         "; huge shapes except\nunder AddressSanitizer. --replay: every reader of each file's "
         "kind, with their answers.\n";
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--seconds")
      o.seconds = std::stod(value());
    else if (a == "--inputs")
      o.inputs = std::stol(value());
    else if (a == "--seed")
      o.seed = std::stoull(value());
    else if (a == "--start")
      o.start = std::stol(value());
    else if (a == "--work")
      o.work = value();
    else if (a == "--root")
      o.root = value();
    else if (a == "--timeout")
      o.timeout = unsigned(std::stoul(value()));
    else if (a == "--max-memory-mb")
      o.max_memory_mb = std::stol(value());
    else if (a == "--hdf5-metadata")
      o.hdf5_metadata = true;
    else if (a == "--no-huge-shapes")
      o.huge_shapes = false;
    else if (a == "--huge-shapes")
      o.huge_shapes = true;
    else if (a == "--kind") {
      const std::string k = value();
      for (int i = 0; i < 4; ++i)
        if (k == kKindNames[i]) o.only_kind = i;
      if (o.only_kind < 0)
        throw std::runtime_error("--kind " + k + ": expected deck, csv, gz or h5");
    } else if (a == "--replay") {
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        o.replay.push_back(argv[++i]);
    } else if (a == "-h" || a == "--help")
      usage(argv[0]), std::exit(0);
    else
      throw std::runtime_error("unknown option '" + a + "' (see --help)");
  }
  if (o.seconds <= 0 && o.inputs <= 0) o.seconds = 60;
  if (o.work.empty())
    o.work = (fs::temp_directory_path() / ("hpt_fuzz." + std::to_string(getpid()))).string();
  return o;
}

// Words for replace_word and insertions: every section, key and choice of the schema, and a few
// the readers treat specially.
std::vector<std::string> dictionary(const hpt::OptionSchema& schema) {
  std::vector<std::string> d{"run",  "step",      "loss", "lr",   "grad_norm", "val_loss", "group",
                             "true", "false",     "on",   "off",  "auto",      "",         "[run]",
                             "[]",   "[dataset]", "=",    "\"\"", "/dev/zero", "/",        "..",
                             "%",    "$HOME",     "nan",  "-"};
  for (const auto& [key, spec] : schema.all()) {
    const auto dot = key.find('.');
    d.push_back(key);
    d.push_back(key.substr(0, dot));
    d.push_back(key.substr(dot + 1));
    d.push_back("[" + key.substr(0, dot) + "]");
    for (const auto& c : spec.choices) d.push_back(c);
  }
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

// The kind of a file to replay, from its name (or, for other names, its first bytes).
Kind kind_of(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  auto ends = [&](const std::string& e) {
    return name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".ini")) return Kind::Deck;
  if (ends(".gz")) return Kind::Gz;
  if (ends(".csv")) return Kind::Csv;
  if (ends(".h5")) return Kind::H5;
  return read_file(path).rfind("\x89HDF\r\n\x1a\n", 0) == 0 ? Kind::H5 : Kind::Csv;
}

void print_counts(const std::map<Kind, std::vector<Reader>>& readers) {
  for (const auto& [kind, list] : readers)
    for (const Reader& r : list)
      std::cout << "  " << kKindNames[int(kind)] << " " << r.name << ": " << r.accepted
                << " accepted, " << r.refused << " refused"
                << (r.out_of_memory ? " (" + std::to_string(r.out_of_memory) + " out of memory)"
                                    : "")
                << ", " << r.failed << " failed\n";
}

int run(const Options& o) {
  hpt::io::silence_hdf5_errors();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hpt::OptionSchema schema = hpt::app::build_schema();
  const hpt::Config defaults(schema);
  const std::vector<std::string> dict = dictionary(schema);

  // Readers per kind.
  std::map<Kind, std::vector<Reader>> readers;
  readers[Kind::Deck].push_back({"read_deck", nullptr});
  readers[Kind::Csv].push_back(
      {"read_curves", [](const std::string& p) { hpt::io::read_curves(p, false); }});
  readers[Kind::Csv].push_back(
      {"read_curves(skip_bad_runs)", [](const std::string& p) { hpt::io::read_curves(p, true); }});
  readers[Kind::Gz].push_back({"read_dataset_file(digits)", [](const std::string& p) {
                                 hpt::io::read_dataset_file("digits", p);
                               }});
  readers[Kind::H5] = readers[Kind::Csv];
  const hpt::forecast::LevelModel level_model = hpt::io::load_level_model(
      (fs::path(o.root) / "inputs" / "models" / "level-model.h5").string(), "forecast.pretrained");
  const std::string live_folder = (fs::path(o.work) / "live").string();
  readers[Kind::Csv].push_back({"live sweep (watch)", [&](const std::string& p) {
                                  read_as_live_sweep(p, live_folder, level_model);
                                }});
  readers[Kind::H5].push_back(
      {"read_dataset_file(hdf5)", [&](const std::string& p) {
         // hpt judges the memory of /X from its declared shape before loading it
         // (app/memory_budget.cpp): a shape beyond the memory is refused there, not read.
         const hpt::io::DeclaredShape x = hpt::io::declared_x_shape(p);
         if (double(x.rows) * double(x.columns) * sizeof(double) >
             double(o.max_memory_mb) * (1 << 18))
           throw hpt::InputError("/X is larger than the memory (refused by the memory check)");
         hpt::io::read_dataset_file("hdf5", p);
       }});
  readers[Kind::H5].push_back({"check_model_file", [&](const std::string& p) {
                                 hpt::io::check_model_file(p, "rollout.model", defaults);
                               }});
  readers[Kind::H5].push_back({"load_level_model", [](const std::string& p) {
                                 hpt::io::load_level_model(p, "forecast.pretrained");
                               }});
  readers[Kind::H5].push_back({"open_hpt_file(checkpoint)", [](const std::string& p) {
                                 hpt::io::H5File f =
                                     hpt::io::open_hpt_file(p, hpt::io::HptFileKind::Checkpoint);
                                 hpt::io::read_hpt_header(f);
                               }});

  std::vector<std::string> overrides;      // --set arguments of the current deck input
  const bool verbose = !o.replay.empty();  // every reader's answer
  readers[Kind::Deck][0].read = [&](const std::string& p) {
    const hpt::Config c = hpt::io::read_deck(schema, p, overrides);
    // What hpt checks next, before any work, that reads no other file.
    c.to_ini();
    const std::string mode = c.get_string("run.mode");
    hpt::app::check_parity_styles(c, mode);
    if (mode == "train" || mode == "rollout" || mode == "bench")
      hpt::app::estimate_memory_need(c, mode);
  };

  // Hands the file `path` to every reader of `kind`; true when one failed (the file is then copied
  // to `keep`, unless that is empty).
  auto feed = [&](Kind kind, const std::string& path, const std::string& keep,
                  const std::string& label) {
    set_current(path, keep);
    bool input_failed = false;
    for (Reader& r : readers[kind]) {
      std::string failure;
      g_reader = r.name.c_str();
      alarm(o.timeout);
      try {
        r.read(path);
        ++r.accepted;
        if (verbose) std::cout << "  " << r.name << ": accepted" << std::endl;
      } catch (const hpt::InputError& e) {
        ++r.refused;
        if (verbose) std::cout << "  " << r.name << ": refused: " << e.what() << std::endl;
      } catch (const std::bad_alloc& e) {
        // A declared size beyond the memory (--max-memory-mb): hpt reports std::bad_alloc as bad
        // input, exit 2 (src/app/main.cpp).
        ++r.refused, ++r.out_of_memory;
        if (verbose) std::cout << "  " << r.name << ": refused: out of memory" << std::endl;
      } catch (const std::exception& e) {
        failure = std::string("exception ") + typeid(e).name() + ": " + e.what();
      } catch (...) {
        failure = "an exception that is not a std::exception";
      }
      alarm(0);
      const ssize_t open_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
      if (failure.empty() && open_objects > 0)
        failure = std::to_string(open_objects) + " HDF5 object(s) left open";
      if (failure.empty()) continue;
      ++r.failed;
      if (!input_failed && !keep.empty())
        fs::copy_file(path, keep, fs::copy_options::overwrite_existing);
      input_failed = true;
      std::cout << "hpt_fuzz: FAILURE in " << r.name << " on " << label
                << (keep.empty() ? "" : ", kept as " + keep) << ": " << failure << std::endl;
      if (open_objects > 0) {  // close them, so the next input starts clean
        std::vector<hid_t> ids(static_cast<std::size_t>(open_objects));
        H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_ALL, ids.size(), ids.data());
        for (hid_t id : ids)
          if (H5Iget_type(id) == H5I_FILE) H5Fclose(id);
      }
    }
    set_current("", "");
    return input_failed;
  };

  if (!o.replay.empty()) {  // the given files, each to the readers of its kind
    int failed = 0;
    for (const std::string& p : o.replay) {
      const Kind kind = kind_of(p);
      std::cout << "hpt_fuzz: " << p << " (" << kKindNames[int(kind)] << ")" << std::endl;
      failed += feed(kind, p, "", p) ? 1 : 0;
    }
    print_counts(readers);
    return failed == 0 ? 0 : 1;
  }

  const fs::path work = o.work, seeds_dir = work / "seeds", failures = work / "failures";
  fs::create_directories(seeds_dir);
  fs::create_directories(failures);

  // Seeds.
  std::vector<Seed> seeds;
  const fs::path inputs = fs::path(o.root) / "inputs";
  if (!fs::is_directory(inputs))
    throw std::runtime_error("no folder '" + inputs.string() +
                             "' (give the repository with --root)");
  std::vector<fs::path> decks;
  for (const auto& e : fs::recursive_directory_iterator(inputs))
    if (e.is_regular_file() && e.path().extension() == ".ini") decks.push_back(e.path());
  std::sort(decks.begin(), decks.end());  // directory order differs between file systems
  for (const auto& p : decks)
    seeds.push_back({Kind::Deck, fs::relative(p, o.root).string(), read_file(p.string()), {}});
  seeds.push_back({Kind::Csv, "curves.csv", csv_curves_seed(), {}});
  seeds.push_back({Kind::Csv, "minimal.csv", csv_minimal_seed(), {}});
  seeds.push_back({Kind::Csv, "validation.csv", csv_val_seed(), {}});
  seeds.push_back({Kind::Gz, "digits.csv.gz", digits_seed(), {}});
  auto h5_seed = [&](const std::string& name, const std::function<void(const std::string&)>& make) {
    const std::string p = (seeds_dir / name).string();
    make(p);
    seeds.push_back({Kind::H5, name, read_file(p), data_ranges(p)});
  };
  h5_seed("curves.h5", write_curves_h5);
  h5_seed("xy_classes.h5", [](const std::string& p) { write_xy_h5(p, false); });
  h5_seed("xy_targets.h5", [](const std::string& p) { write_xy_h5(p, true); });
  h5_seed("model.h5", [&](const std::string& p) { write_model_h5(p, defaults); });
  h5_seed("checkpoint.h5", write_checkpoint_h5);
  h5_seed("level_model.h5", write_level_model_h5);
  std::map<Kind, std::vector<const Seed*>> by_kind;
  for (const auto& s : seeds) by_kind[s.kind].push_back(&s);

  std::cout << "hpt_fuzz: seed " << o.seed << ", "
            << (o.inputs > 0 ? std::to_string(o.inputs) + " inputs" : "")
            << (o.inputs > 0 && o.seconds > 0 ? " or " : "")
            << (o.seconds > 0 ? std::to_string(long(o.seconds)) + " s" : "") << ", " << seeds.size()
            << " seeds, work folder " << work.string() << std::endl;

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  long tried = 0, failed_inputs = 0;
  double next_progress = 30;
  std::map<Kind, long> tried_kind;
  for (long index = o.start;; ++index) {
    if (o.inputs > 0 && tried >= o.inputs) break;
    if (o.seconds > 0 && elapsed() >= o.seconds) break;
    // Input `index` of seed S depends on (S, index) only.
    std::seed_seq sequence{std::uint32_t(o.seed), std::uint32_t(o.seed >> 32), std::uint32_t(index),
                           std::uint32_t(std::uint64_t(index) >> 32)};
    std::mt19937_64 rng(sequence);
    Mutator m(rng, dict);
    const std::size_t pick = m.below(100);  // 40 % decks, 25 % CSV, 7 % gzip CSV, 28 % HDF5
    const Kind kind = o.only_kind >= 0 ? Kind(o.only_kind)
                      : pick < 40      ? Kind::Deck
                      : pick < 65      ? Kind::Csv
                      : pick < 72      ? Kind::Gz
                                       : Kind::H5;
    const auto& pool = by_kind[kind];
    const Seed& seed = *pool[m.below(pool.size())];
    const Seed& other = *pool[m.below(pool.size())];
    const std::string path = (work / ("input" + std::string(kKindExt[int(kind)]))).string();
    const std::string keep =
        (failures / ("input-" + std::to_string(index) + kKindExt[int(kind)])).string();
    std::string origin = seed.name;
    Bytes bytes = seed.bytes;
    const std::size_t rounds = 1 + m.below(m.chance(0.2) ? 16 : 4);
    if (kind == Kind::H5 && m.chance(0.35)) {
      StructuralH5(m, defaults, o.huge_shapes).write(path);
      origin = "structural";
    } else if (kind == Kind::H5) {
      for (std::size_t r = 0; r < rounds; ++r)
        m.binary(bytes, other.bytes, seed.data_ranges, o.hdf5_metadata);
      write_file(path, bytes);
    } else if (kind == Kind::Gz && m.chance(0.15)) {
      bytes = gzip(bytes);
      for (std::size_t r = 0; r < rounds; ++r) m.binary(bytes, other.bytes, {}, true);
      write_file(path, bytes);
    } else {
      for (std::size_t r = 0; r < rounds; ++r) m.text(bytes, other.bytes);
      write_file(path, kind == Kind::Gz ? gzip(bytes) : bytes);
    }
    overrides.clear();
    if (kind == Kind::Deck && m.chance(0.2)) {
      Bytes o1 =
          dict[m.below(dict.size())] + "=" + seed.bytes.substr(m.below(seed.bytes.size()), 12);
      m.text(o1, seed.bytes);
      overrides.push_back(o1);
    }
    const bool input_failed =
        feed(kind, path, keep, "input " + std::to_string(index) + " (from " + origin + ")");
    if (input_failed) ++failed_inputs;
    ++tried, ++tried_kind[kind];
    if (elapsed() >= next_progress) {
      std::cout << "hpt_fuzz: " << tried << " inputs in " << long(elapsed()) << " s, "
                << failed_inputs << " failed" << std::endl;
      next_progress += next_progress < 300 ? 30 : 300;
    }
  }
  set_current("", "");
  const double s = elapsed();
  std::cout << "hpt_fuzz: " << tried << " inputs tried in " << std::fixed;
  std::cout.precision(1);
  std::cout << s << " s (" << (s > 0 ? double(tried) / s : 0.0) << " per second), " << failed_inputs
            << " failed\n";
  for (const auto& [kind, n] : tried_kind)
    std::cout << "  " << kKindNames[int(kind)] << ": " << n << " inputs\n";
  print_counts(readers);
  std::cout << (failed_inputs == 0
                    ? "hpt_fuzz: no failure\n"
                    : "hpt_fuzz: FAILED (inputs kept in " + failures.string() + ")\n")
            << std::flush;
  return failed_inputs == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hpt_fuzz: " << e.what() << "\n";
    return 2;
  }
#if !defined(__SANITIZE_ADDRESS__)
  // A mutated shape can make a reader ask for more memory than the machine has; a cap turns that
  // into std::bad_alloc (a failure, the input kept). AddressSanitizer reserves terabytes of address
  // space: there its max_allocation_size_mb does this (__asan_default_options above).
  if (o.max_memory_mb > 0) {
    struct rlimit limit = {};
    limit.rlim_cur = limit.rlim_max = rlim_t(o.max_memory_mb) << 20;
    setrlimit(RLIMIT_AS, &limit);
  }
#endif
  install_handlers();
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "hpt_fuzz: " << e.what() << "\n";
    return 2;
  }
}
