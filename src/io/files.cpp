#include "io/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "common/error.hpp"

namespace strata::io {

namespace {

[[noreturn]] void io_fail(const std::string& label, std::string_view action, int err) {
  fail(Status::kIo, fmt::format("{}: {}: {}", label, action, std::strerror(err)));
}

// Temporary files not yet renamed into place or removed, for remove_unfinished_outputs(), which
// may run in a signal handler: lock-free slots of C strings owned by live Output objects.
constexpr int kTrackedSlots = 64;
std::atomic<const char*> g_unfinished[kTrackedSlots];
static_assert(std::atomic<const char*>::is_always_lock_free);

void track(const char* path) {
  for (auto& slot : g_unfinished) {
    const char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, path)) return;
  }
  // Every slot taken: this one is still removed by its OutputSet's destructor.
}

void untrack(const char* path) {
  for (auto& slot : g_unfinished) {
    const char* expected = path;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

// The folder a new file at `path` goes into ("." for a bare name).
std::filesystem::path folder_of(const std::filesystem::path& path) {
  const std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

std::string_view file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "regular file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISFIFO(mode)) return "named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISLNK(mode)) return "symbolic link";
  return "special file";
}

std::string describe(std::string_view option, const std::filesystem::path& path) {
  return option.empty() ? fmt::format("'{}'", path.string())
                        : fmt::format("{} '{}'", option, path.string());
}

// ---- inputs ------------------------------------------------------------------------------------

InputFile InputFile::open(const std::filesystem::path& path, std::string_view option) {
  std::string label = describe(option, path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) io_fail(label, "cannot open", errno);
  if (!S_ISREG(st.st_mode))
    fail(Status::kIo, fmt::format("{}: is a {}, not a regular file", label, file_kind(st.st_mode)));
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, open() still returns.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) io_fail(label, "cannot open", errno);
  InputFile file(fd, 0, std::move(label));
  if (::fstat(fd, &st) != 0) io_fail(file.label_, "cannot stat", errno);
  if (!S_ISREG(st.st_mode))
    fail(Status::kIo,
         fmt::format("{}: is a {}, not a regular file", file.label_, file_kind(st.st_mode)));
  file.size_bytes_ = static_cast<uint64_t>(st.st_size);
  return file;
}

void InputFile::read_at(uint64_t offset, void* out, size_t bytes) const {
  auto* p = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_fail(label_, "read failed", errno);
    if (n == 0)
      fail(Status::kIo, fmt::format("{}: read failed: the file ended early (it changed while "
                                    "being read?)",
                                    label_));
    p += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(other.fd_), size_bytes_(other.size_bytes_), label_(std::move(other.label_)) {
  other.fd_ = -1;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

// ---- outputs -----------------------------------------------------------------------------------

void Output::write(const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_fail(label_, "write failed", errno);
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

OutputSet::OutputSet(std::vector<NamedPath> inputs) {
  for (const NamedPath& in : inputs) {
    struct stat st {};
    if (in.path.empty() || ::stat(in.path.c_str(), &st) != 0) continue;
    inputs_.push_back({describe(in.option, in.path), st.st_dev, st.st_ino});
  }
}

Output& OutputSet::add(std::string_view option, const std::filesystem::path& path) {
  auto out = std::make_unique<Output>();
  out->label_ = describe(option, path);
  const std::string& label = out->label_;
  require(!path.empty(), Status::kInvalidArgument, fmt::format("{}: empty path", label));

  // An existing symbolic link is written through: the file it names is the one replaced.
  std::filesystem::path final_path = path;
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) io_fail(label, "cannot create", errno);
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (!exists) fail(Status::kIo, fmt::format("{}: is a symbolic link to a missing file", label));
    std::error_code ec;
    final_path = std::filesystem::canonical(path, ec);
    if (ec) io_fail(label, "cannot resolve the link", ec.value());
  }
  mode_t mode = 0666;
  if (exists) {
    if (!S_ISREG(st.st_mode))
      fail(Status::kIo, fmt::format("{}: is a {}; an output must be a new or a regular file", label,
                                    file_kind(st.st_mode)));
    for (const InputId& in : inputs_)
      if (in.dev == st.st_dev && in.ino == st.st_ino)
        fail(Status::kInvalidArgument,
             fmt::format("{}: is the same file as the input {}; refusing to overwrite an input",
                         label, in.label));
    mode = st.st_mode & 07777;
  } else {
    // NOTE: umask() has no read-only form; it is set and restored at once.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }

  const std::filesystem::path folder = folder_of(final_path);
  struct stat folder_st {};
  if (::stat(folder.c_str(), &folder_st) != 0) io_fail(label, "cannot create", errno);
  if (!S_ISDIR(folder_st.st_mode))
    fail(Status::kIo, fmt::format("{}: cannot create: {}", label, std::strerror(ENOTDIR)));

  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::weakly_canonical(final_path, ec);
  for (const auto& other : outputs_) {
    std::error_code other_ec;
    if (!ec && std::filesystem::weakly_canonical(other->final_path_, other_ec) == absolute &&
        !other_ec)
      fail(Status::kInvalidArgument,
           fmt::format("{}: is also the output {}", label, other->label_));
  }

  // ".<name>.XXXXXX", or a fixed stem where that would pass the 255-byte limit of a file name.
  const std::string name = final_path.filename().string();
  std::string temp =
      (folder / (name.size() + 8 <= 255 ? fmt::format(".{}.XXXXXX", name) : ".strata-moe.XXXXXX"))
          .string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) io_fail(label, fmt::format("cannot create a file in '{}'", folder.string()), errno);
  out->fd_ = fd;
  out->temp_path_ = temp;
  out->final_path_ = final_path;
  track(out->temp_path_.c_str());
  outputs_.push_back(std::move(out));  // from here on the destructor removes the temporary
  Output& added = *outputs_.back();
  if (::fchmod(fd, mode) != 0) io_fail(added.label_, "cannot set the file mode", errno);
  return added;
}

void OutputSet::commit() {
  for (const auto& out : outputs_) {
    if (::fsync(out->fd_) != 0) io_fail(out->label_, "write failed", errno);
    const int closed = ::close(out->fd_);
    out->fd_ = -1;
    if (closed != 0) io_fail(out->label_, "write failed", errno);
  }
  for (const auto& out : outputs_) {
    if (::rename(out->temp_path_.c_str(), out->final_path_.c_str()) != 0)
      io_fail(out->label_, "cannot rename the finished file into place", errno);
    out->committed_ = true;
    untrack(out->temp_path_.c_str());
  }
}

OutputSet::~OutputSet() {
  for (const auto& out : outputs_) {
    if (out->fd_ >= 0) ::close(out->fd_);
    if (!out->committed_) {
      untrack(out->temp_path_.c_str());
      ::unlink(out->temp_path_.c_str());
    }
  }
}

void remove_unfinished_outputs() noexcept {
  // The slots are read, not cleared: a handler running in two threads at once removes every file
  // in each (a second unlink() of a path only fails), so neither can end the process early.
  for (auto& slot : g_unfinished)
    if (const char* path = slot.load()) ::unlink(path);
}

}  // namespace strata::io
