// Inputs refused by kind before they are opened, outputs committed together or not at all, an
// output over an input refused; printable() for names from files.
#include "io/files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "common/text.hpp"
#include "io/npy.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

class Folder {
 public:
  Folder() {
    std::string name = (fs::temp_directory_path() / "strata-files-XXXXXX").string();
    path_ = ::mkdtemp(name.data());
  }
  ~Folder() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  int entries() const {
    return static_cast<int>(std::distance(fs::directory_iterator(path_), fs::directory_iterator()));
  }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}
std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <class Fn>
std::string error_of(Fn&& fn, Status status) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(InputFile, RefusesWhatIsNotARegularFileWithoutOpeningIt) {
  Folder dir;
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  // Opening a FIFO for reading blocks until a writer comes: an error here means it was not opened.
  EXPECT_NE(error_of([&] { io::InputFile::open(dir / "pipe", "--x"); }, Status::kIo)
                .find("--x '" + (dir / "pipe").string() + "': is a named pipe (FIFO)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { io::InputFile::open(dir.path(), ""); }, Status::kIo).find("directory"),
            std::string::npos);
  EXPECT_NE(error_of([&] { io::InputFile::open(dir / "none", "--gguf"); }, Status::kIo)
                .find("cannot open: No such file or directory"),
            std::string::npos);
  write_text(dir / "data", "abcdef");
  const io::InputFile file = io::InputFile::open(dir / "data", "--blocks");
  EXPECT_EQ(file.size_bytes(), 6u);
  char middle[3] = {};
  file.read_at(2, middle, 2);
  EXPECT_STREQ(middle, "cd");
  EXPECT_NE(error_of([&] { file.read_at(4, middle, 3); }, Status::kIo).find("ended early"),
            std::string::npos);
}

TEST(OutputSet, NothingReachesTheFinalPathsWithoutACommit) {
  Folder dir;
  write_text(dir / "old", "previous");
  {
    io::OutputSet outputs({});
    outputs.add("--out", dir / "old").write("new", 3);
    outputs.add("--ids-out", dir / "fresh").write("x", 1);
    EXPECT_EQ(dir.entries(), 3);  // old + two temporaries
  }                               // a failure: destroyed uncommitted
  EXPECT_EQ(dir.entries(), 1);
  EXPECT_EQ(read_text(dir / "old"), "previous");
  {
    io::OutputSet outputs({});
    outputs.add("--out", dir / "old").write("new", 3);
    outputs.add("--ids-out", dir / "fresh").write("x", 1);
    outputs.commit();
  }
  EXPECT_EQ(dir.entries(), 2);
  EXPECT_EQ(read_text(dir / "old"), "new");
  EXPECT_EQ(read_text(dir / "fresh"), "x");
}

TEST(OutputSet, UnfinishedOutputsAreRemovedWithoutTheirSet) {
  // What the CLI's signal handlers and exit hook call: every uncommitted temporary goes, the
  // committed files and the previous contents of final paths stay.
  Folder dir;
  write_text(dir / "old", "previous");
  io::OutputSet done({});
  done.add("--ids-out", dir / "done").write("d", 1);
  done.commit();
  io::OutputSet pending({});
  pending.add("--out", dir / "old").write("new", 3);
  pending.add("--weights-out", dir / "fresh").write("x", 1);
  EXPECT_EQ(dir.entries(), 4);  // old, done + two temporaries
  io::remove_unfinished_outputs();
  EXPECT_EQ(dir.entries(), 2);
  EXPECT_EQ(read_text(dir / "old"), "previous");
  EXPECT_EQ(read_text(dir / "done"), "d");
  io::remove_unfinished_outputs();  // again: nothing left to remove, nothing else touched
  EXPECT_EQ(dir.entries(), 2);
}

TEST(OutputSet, KeepsTheModeOfAReplacedFileAndWritesThroughALink) {
  Folder dir;
  write_text(dir / "target", "previous");
  ASSERT_EQ(::chmod((dir / "target").c_str(), 0640), 0);
  fs::create_symlink("target", dir / "link");
  io::OutputSet outputs({});
  outputs.add("--out", dir / "link").write("new", 3);
  outputs.commit();
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(read_text(dir / "target"), "new");
  struct stat st {};
  ASSERT_EQ(::stat((dir / "target").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(OutputSet, AnOutputOverAnInputIsRefusedBeforeAnythingIsCreated) {
  Folder dir;
  write_text(dir / "model", "weights");
  fs::create_hard_link(dir / "model", dir / "hard");
  fs::create_symlink("model", dir / "soft");
  for (const char* name : {"model", "hard", "soft"}) {
    io::OutputSet outputs({{"--gguf", dir / "model"}, {"--x", dir / "absent"}});
    EXPECT_NE(error_of([&] { outputs.add("--out", dir / name); }, Status::kInvalidArgument)
                  .find("is the same file as the input --gguf"),
              std::string::npos)
        << name;
    EXPECT_EQ(dir.entries(), 3) << name;
  }
  EXPECT_EQ(read_text(dir / "model"), "weights");
  io::OutputSet outputs({});
  outputs.add("--out", dir / "y");
  EXPECT_NE(
      error_of([&] { outputs.add("--ids-out", dir.path() / "." / "y"); }, Status::kInvalidArgument)
          .find("is also the output --out"),
      std::string::npos);
}

TEST(OutputSet, RefusesFoldersAndSpecialFilesAsOutputs) {
  Folder dir;
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  write_text(dir / "file", "x");
  io::OutputSet outputs({});
  EXPECT_NE(error_of([&] { outputs.add("--out", dir.path()); }, Status::kIo).find("directory"),
            std::string::npos);
  EXPECT_NE(error_of([&] { outputs.add("--out", dir / "pipe"); }, Status::kIo).find("FIFO"),
            std::string::npos);
  EXPECT_NE(error_of([&] { outputs.add("--out", dir / "file" / "y"); }, Status::kIo)
                .find("Not a directory"),
            std::string::npos);
  EXPECT_NE(error_of([&] { outputs.add("--out", dir / "none" / "y"); }, Status::kIo)
                .find("No such file or directory"),
            std::string::npos);
}

TEST(Npy, EmptyArrayParses) {
  const std::string head = npy::header(npy::DType::I32, {0, 4});
  const std::vector<uint8_t> bytes(head.begin(), head.end());
  const npy::Array array = npy::parse(bytes, "empty");
  EXPECT_EQ(array.size(), 0);
  EXPECT_TRUE(array.bytes.empty());
  std::vector<uint8_t> short_data = bytes;
  short_data.push_back(0);
  EXPECT_NE(error_of([&] { npy::parse(short_data, "short"); }, Status::kBadFile).find("short:"),
            std::string::npos);
}

TEST(Error, KeepsTheMessagePastANulByte) {
  // what() is a C string: a NUL from a file's name must not end the message there.
  static const char kName[] = "blk.0.ffn_\0evil.weight";
  const std::string name(kName, sizeof kName - 1);
  const Error e(Status::kBadFile, "tensor '" + name + "': the reason");
  EXPECT_STREQ(e.what(), "tensor 'blk.0.ffn_\u2400evil.weight': the reason");
  EXPECT_EQ(e.status(), Status::kBadFile);
}

TEST(Printable, EscapesControlsAndInvalidUtf8) {
  EXPECT_EQ(printable("blk.0.ffn_gate_exps.weight"), "blk.0.ffn_gate_exps.weight");
  EXPECT_EQ(printable("a\x1b[31mb\a"), "a\\x1b[31mb\\x07");
  EXPECT_EQ(printable("line\nnext\ttab"), "line\\nnext\\ttab");
  EXPECT_EQ(printable("back\\slash"), "back\\\\slash");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // UTF-8 passes
  EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");                                // invalid
  EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");                                // C1 CSI
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

}  // namespace
}  // namespace strata
