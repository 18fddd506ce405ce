#include "kvsweep/model/gguf.hpp"

#include "temp_file.hpp"
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

namespace kvsweep::model {
namespace {

std::string bytes(std::initializer_list<int> list) {
  std::string s;
  for (int b : list) {
    s.push_back(static_cast<char>(b));
  }
  return s;
}

using kvsweep::testing::slurp;
using kvsweep::testing::temp_file;

Value array_of(ValueType type, std::vector<Value> items) {
  return Value::of_array(Array{type, std::move(items)});
}

Value u16(std::uint16_t v) { return Value{Value::Data{std::in_place_index<2>, v}}; }

TEST(GgufEncoding, StringKvMatchesByteTable) {
  std::string out;
  append_kv(out, {"ab", Value::of_string("xyz")});
  EXPECT_EQ(out, bytes({2, 0, 0, 0, 0, 0, 0, 0, 'a', 'b',  // key: u64 length + bytes
                        8, 0, 0, 0,                          // type: string
                        3, 0, 0, 0, 0, 0, 0, 0, 'x', 'y', 'z'}));
}

TEST(GgufEncoding, ScalarsAreLittleEndian) {
  std::string out;
  append_value(out, Value::of_u32(0x01020304u));
  append_value(out, Value::of_f32(1.0f));
  append_value(out, Value::of_bool(true));
  append_value(out, Value::of_u64(0x0102030405060708ull));
  EXPECT_EQ(out, bytes({4, 0, 0, 0, 4, 3, 2, 1,        // u32
                        6, 0, 0, 0, 0, 0, 0x80, 0x3f,  // f32 1.0 = 0x3f800000
                        7, 0, 0, 0, 1,                 // bool: one byte
                        10, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1}));
}

TEST(GgufEncoding, ArraysMatchByteTable) {
  std::string out;
  append_kv(out, {"k", array_of(ValueType::u16, {u16(1), u16(0x0203)})});
  append_value(out, array_of(ValueType::string, {Value::of_string("a"), Value::of_string("")}));
  EXPECT_EQ(out, bytes({1, 0, 0, 0, 0, 0, 0, 0, 'k',  // key
                        9, 0, 0, 0,                   // type: array
                        2, 0, 0, 0,                   // element type: u16
                        2, 0, 0, 0, 0, 0, 0, 0,       // count
                        1, 0, 3, 2,                   // items
                        9, 0, 0, 0, 8, 0, 0, 0,       // array of string
                        2, 0, 0, 0, 0, 0, 0, 0,       // count
                        1, 0, 0, 0, 0, 0, 0, 0, 'a',  // "a"
                        0, 0, 0, 0, 0, 0, 0, 0}));    // ""
}

TEST(GgufParse, LiteralFileWithoutTensors) {
  const std::string file = bytes({'G', 'G', 'U', 'F', 3, 0, 0, 0,  // magic, version
                                  0, 0, 0, 0, 0, 0, 0, 0,          // no tensors
                                  2, 0, 0, 0, 0, 0, 0, 0,          // two kvs
                                  1, 0, 0, 0, 0, 0, 0, 0, 'n', 5, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff,
                                  1, 0, 0, 0, 0, 0, 0, 0, 's', 9, 0, 0, 0, 8, 0, 0, 0,
                                  1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'h', 'i'});
  std::istringstream in(file);
  auto parsed = parse_gguf(in);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->kvs.size(), 2u);
  EXPECT_EQ(parsed->kvs[0].key, "n");
  EXPECT_EQ(parsed->kvs[0].value, Value::of_i32(-2));
  EXPECT_EQ(parsed->kvs[1].key, "s");
  EXPECT_EQ(parsed->kvs[1].value, array_of(ValueType::string, {Value::of_string("hi")}));
  EXPECT_EQ(parsed->alignment, gguf_default_alignment);
  EXPECT_TRUE(parsed->tensors.empty());

  // Encoding what we parsed gives back the same bytes (plus padding to the alignment).
  auto header = encode_header(*parsed);
  ASSERT_TRUE(header) << header.error().message;
  EXPECT_EQ(header->substr(0, file.size()), file);
  EXPECT_EQ(header->size(), 96u);
}

TEST(GgufParse, RejectsBadMagicTruncationAndBadAlignment) {
  {
    std::istringstream in(bytes({'G', 'G', 'U', 'X', 3, 0, 0, 0}));
    auto r = parse_gguf(in);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, core::ErrorKind::parse);
  }
  {
    // Claims one kv whose string value is longer than the file.
    std::istringstream in(bytes({'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                 1, 0, 0, 0, 0, 0, 0, 0,
                                 1, 0, 0, 0, 0, 0, 0, 0, 's', 8, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0}));
    auto r = parse_gguf(in);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, core::ErrorKind::parse);
  }
  {
    // general.alignment must be a u32.
    GgufFile file;
    file.kvs.push_back({"general.alignment", Value::of_u64(64)});
    EXPECT_FALSE(encode_header(file));
  }
  {
    std::istringstream in(bytes({'G', 'G', 'U', 'F', 2, 0, 0, 0,  // version 2
                                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
    auto r = parse_gguf(in);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, core::ErrorKind::unsupported);
  }
}

TEST(GgufTensorBytes, BlockTypes) {
  const std::uint64_t row[] = {64, 3};
  EXPECT_EQ(tensor_bytes(TensorType::f32, row).value(), 64u * 3 * 4);
  EXPECT_EQ(tensor_bytes(TensorType::f16, row).value(), 64u * 3 * 2);
  EXPECT_EQ(tensor_bytes(TensorType::q8_0, row).value(), 2u * 3 * 34);
  EXPECT_EQ(tensor_bytes(TensorType::q4_0, row).value(), 2u * 3 * 18);
  const std::uint64_t odd[] = {33};
  EXPECT_FALSE(tensor_bytes(TensorType::q8_0, odd));
  EXPECT_FALSE(tensor_bytes(static_cast<TensorType>(999), odd));
}

TEST(GgufRoundTrip, WriteThenReadBack) {
  GgufFile file;
  file.kvs = {
      {"general.architecture", Value::of_string("llama")},
      {"general.alignment", Value::of_u32(64)},
      {"x.i8", Value{Value::Data{std::in_place_index<1>, std::int8_t{-5}}}},
      {"x.i64", Value{Value::Data{std::in_place_index<11>, std::int64_t{-1234567890123}}}},
      {"x.f64", Value{Value::Data{std::in_place_index<12>, 0.25}}},
      {"x.bool", Value::of_bool(false)},
      {"x.f32s", array_of(ValueType::f32, {Value::of_f32(0.5f), Value::of_f32(-2.0f)})},
      {"x.nested", array_of(ValueType::array, {array_of(ValueType::i32, {Value::of_i32(7)}),
                                               array_of(ValueType::i32, {})})},
      {"x.empty", Value::of_string("")},
  };
  file.tensors = {
      {"a", {3, 2}, TensorType::f32, 0},   // 24 bytes, padded to 64
      {"b", {5}, TensorType::f16, 0},      // 10 bytes, padded to 64
      {"c", {32, 2}, TensorType::q8_0, 0}, // 68 bytes, padded to 128
  };
  const auto path = temp_file(".gguf");
  auto written = write_gguf(path, file, [](std::size_t index, std::string& out) {
    static constexpr std::size_t sizes[] = {24, 10, 68};
    for (std::size_t i = 0; i < sizes[index]; ++i) {
      out.push_back(static_cast<char>(index * 100 + i));
    }
  });
  ASSERT_TRUE(written) << written.error().message;

  auto read = read_gguf(path);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->version, 3u);
  EXPECT_EQ(read->alignment, 64u);
  EXPECT_EQ(read->kvs, file.kvs);
  ASSERT_EQ(read->tensors.size(), 3u);
  EXPECT_EQ(read->tensors[0], (TensorInfo{"a", {3, 2}, TensorType::f32, 0}));
  EXPECT_EQ(read->tensors[1], (TensorInfo{"b", {5}, TensorType::f16, 64}));
  EXPECT_EQ(read->tensors[2], (TensorInfo{"c", {32, 2}, TensorType::q8_0, 128}));
  EXPECT_EQ(read->data_offset % 64, 0u);

  const std::string content = slurp(path);
  ASSERT_EQ(content.size(), read->data_offset + 256);
  EXPECT_EQ(content[read->data_offset + 0], static_cast<char>(0));
  EXPECT_EQ(content[read->data_offset + 23], static_cast<char>(23));
  EXPECT_EQ(content[read->data_offset + 24], '\0');  // padding
  EXPECT_EQ(content[read->data_offset + 64 + 9], static_cast<char>(109));
  EXPECT_EQ(content[read->data_offset + 128 + 67], static_cast<char>(267 % 256));
  std::filesystem::remove(path);
}

TEST(GgufRoundTrip, FillWithWrongSizeFails) {
  GgufFile file;
  file.tensors = {{"a", {4}, TensorType::f32, 0}};
  const auto path = temp_file(".gguf");
  auto written = write_gguf(path, file, [](std::size_t, std::string& out) { out.append(15, 'x'); });
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().kind, core::ErrorKind::invalid);
  EXPECT_FALSE(std::filesystem::exists(path));  // no half-written file left behind
}

TEST(GgufRoundTrip, MissingFileIsIoError) {
  auto r = read_gguf(temp_file(".does-not-exist"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, core::ErrorKind::io);
}

}  // namespace
}  // namespace kvsweep::model
