// Input and output files as the library and the CLI open them.
//
// Inputs: the path is stat'ed before it is opened, and anything but a regular file (a
// directory, a named pipe, a device) is refused by kind, so a FIFO can never block open().
// Outputs: each goes to a temporary file next to its final path; OutputSet::commit() renames
// them all into place at the end, and an OutputSet destroyed without a commit (a failure
// anywhere in the command) removes its temporaries, leaving every final path as it was. An
// output that is the same file as an input (same device and inode, also through links) is
// refused before anything is created. Every error names the option, the path and the reason.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace strata::io {

// "regular file", "directory", "named pipe (FIFO)", ... for a stat mode.
std::string_view file_kind(mode_t mode);

// An open regular input file (read-only, close-on-exec); closes on destruction.
class InputFile {
 public:
  // Throws Error(kIo) naming `option` (e.g. "--x"; may be empty) and the path.
  static InputFile open(const std::filesystem::path& path, std::string_view option);

  int fd() const { return fd_; }
  uint64_t size_bytes() const { return size_bytes_; }
  // Reads exactly `bytes` at `offset` or throws Error(kIo) naming the file.
  void read_at(uint64_t offset, void* out, size_t bytes) const;
  const std::string& label() const { return label_; }  // "--x 'path'" or "'path'"

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

 private:
  InputFile(int fd, uint64_t size_bytes, std::string label)
      : fd_(fd), size_bytes_(size_bytes), label_(std::move(label)) {}
  int fd_ = -1;
  uint64_t size_bytes_ = 0;
  std::string label_;
};

// "--x 'path'" (or "'path'" without an option): how messages name a file.
std::string describe(std::string_view option, const std::filesystem::path& path);

struct NamedPath {
  std::string option;  // "--x"
  std::filesystem::path path;
};

class OutputSet;

// One output being written: a temporary file in the final path's folder.
class Output {
 public:
  // Appends `bytes`; a short or failed write throws Error(kIo) with strerror (a full disk says so).
  void write(const void* data, size_t bytes);
  const std::string& label() const { return label_; }

 private:
  friend class OutputSet;
  std::string label_;
  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

class OutputSet {
 public:
  // `inputs`: the command's input files; an output naming any of them is refused. Inputs that do
  // not exist are skipped here (reading them reports it).
  explicit OutputSet(std::vector<NamedPath> inputs);
  // Checks `path` (a new file in an existing folder, or an existing regular file, not an input
  // and not another output) and creates its temporary file. The reference stays valid until the
  // set is destroyed.
  Output& add(std::string_view option, const std::filesystem::path& path);
  // Flushes every output to disk and renames each into place. Throws Error(kIo) if any step fails;
  // outputs not yet renamed are removed.
  void commit();
  ~OutputSet();  // removes every temporary file not committed

  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

 private:
  struct InputId {
    std::string label;
    dev_t dev;
    ino_t ino;
  };
  std::vector<InputId> inputs_;
  std::vector<std::unique_ptr<Output>> outputs_;
};

// Removes the temporary file of every output not yet committed, in any OutputSet. Only unlink(2)
// is called, so it is safe in a signal handler and after exit() (where no destructor runs): the
// CLI calls it from its handlers of fatal signals and at exit.
void remove_unfinished_outputs() noexcept;

}  // namespace strata::io
