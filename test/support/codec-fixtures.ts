/**
 * The protos the binary codec's property tests (test/runtime/binary-codec.cases.ts)
 * run the plugin on, with every field kind: proto3 (All, Inner, Unpacked),
 * proto2 (closed enums, defaults, required fields, groups), editions
 * (explicit presence by default, delimited message fields) and 64-bit
 * fields held as strings. The golden test type-checks their emitted codecs.
 */
const proto3 = `syntax = "proto3";
package bc.v1;
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";
enum Color { COLOR_UNSPECIFIED = 0; COLOR_RED = 1; COLOR_BLUE = 2; }
message All {
  double f_double = 1; float f_float = 2; int64 f_int64 = 3; uint64 f_uint64 = 4; int32 f_int32 = 5;
  fixed64 f_fixed64 = 6; fixed32 f_fixed32 = 7; bool f_bool = 8; string f_string = 9; bytes f_bytes = 10;
  uint32 f_uint32 = 11; sfixed32 f_sfixed32 = 12; sfixed64 f_sfixed64 = 13; sint32 f_sint32 = 14; sint64 f_sint64 = 15;
  Color f_enum = 16; Inner f_msg = 17;
  optional string o_string = 18; optional int32 o_int32 = 19; optional Color o_enum = 20; optional bool o_bool = 21;
  repeated int64 r_int64 = 22; repeated string r_string = 23; repeated Color r_enum = 24; repeated Inner r_msg = 25;
  repeated bytes r_bytes = 26; repeated double r_double = 27;
  map<string, Inner> m_msg = 28; map<int64, string> m_int64 = 29; map<bool, Color> m_bool = 30; map<int32, bytes> m_bytes = 31;
  oneof choice { string c_string = 32; Inner c_msg = 33; int32 c_int32 = 34; Color c_enum = 35; bytes c_bytes = 53; google.protobuf.Struct c_struct = 54; google.protobuf.StringValue c_wrapped = 55; }
  google.protobuf.Struct f_struct = 36; google.protobuf.Value f_value = 37; google.protobuf.ListValue f_list = 38;
  google.protobuf.Timestamp f_ts = 39; google.protobuf.Duration f_dur = 40; repeated google.protobuf.Timestamp r_ts = 41;
  repeated google.protobuf.Struct r_struct = 42; map<string, google.protobuf.Struct> m_struct = 43;
  google.protobuf.StringValue w_string = 44; google.protobuf.Int64Value w_int64 = 45; google.protobuf.BytesValue w_bytes = 46;
  google.protobuf.BoolValue w_bool = 47; google.protobuf.DoubleValue w_double = 48;
  google.protobuf.Any f_any = 49; google.protobuf.Empty f_empty = 50;
  repeated sint32 r_sint32 = 51; repeated fixed64 r_fixed64 = 52;
  map<uint64, Color> m_uint64 = 56; map<sfixed32, double> m_sfixed32 = 57; map<string, bytes> m_str_bytes = 58;
  repeated bool r_bool = 59; repeated float r_float = 60; repeated uint32 r_uint32 = 61;
  All recurse = 62;
  int64 big_number = 3000;
}
message Inner {
  string name = 1;
  int64 big = 2;
  bytes raw = 3;
  Inner child = 4;
  map<string, string> labels = 5;
}
// Field numbers of All, written unpacked.
message Unpacked {
  repeated int64 r_int64 = 22 [packed = false]; repeated Color r_enum = 24 [packed = false]; repeated double r_double = 27 [packed = false];
  repeated sint32 r_sint32 = 51 [packed = false]; repeated fixed64 r_fixed64 = 52 [packed = false];
  repeated bool r_bool = 59 [packed = false]; repeated float r_float = 60 [packed = false]; repeated uint32 r_uint32 = 61 [packed = false];
}
`;

const proto2 = `syntax = "proto2";
package bc.v2;
enum Closed { CLOSED_A = 1; CLOSED_B = 2; }
message P2 {
  optional int32 i = 1 [default = 7];
  optional string s = 2 [default = "d"];
  optional Closed e = 3;
  repeated Closed re = 4;
  repeated int32 unpacked = 5;
  repeated int32 packed = 6 [packed = true];
  optional P2 child = 7;
  map<string, Closed> m = 8;
  optional bytes b = 9 [default = "x"];
  optional int64 l = 10 [jstype = JS_STRING];
  repeated uint64 rl = 11 [jstype = JS_STRING];
  oneof o { Closed o_e = 12; string o_s = 13; }
  optional Req req = 14;
  repeated WithGroup groups = 15;
}
message Req { required string id = 1; optional int32 n = 2; }
message WithGroup { optional group G = 1 { optional int32 a = 2; } optional string after = 3; }
`;

// Editions: explicit presence by default (defaults on the prototype, as in
// proto2), a delimited message field outside a group, an implicit field,
// and a proto3 int64 held as a string (its zero, "0", in the zero literal).
const editions = `edition = "2023";
package bc.v3;
message Ed {
  int32 n = 1 [default = 4];
  string s = 2;
  Ed child = 3 [features.message_encoding = DELIMITED];
  repeated Ed kids = 4 [features.message_encoding = DELIMITED];
  int32 plain = 5 [features.field_presence = IMPLICIT];
  repeated int32 packed = 6;
  oneof pick { string p_s = 7; Ed p_m = 8; }
}
`;

const proto3Strings = `syntax = "proto3";
package bc.v4;
message Longs { int64 big = 1 [jstype = JS_STRING]; repeated uint64 many = 2 [jstype = JS_STRING]; bytes raw = 3; string name = 4; }
`;

export const codecFixtures: Readonly<Record<string, string>> = {
  "bc/v1/all.proto": proto3,
  "bc/v2/p2.proto": proto2,
  "bc/v3/ed.proto": editions,
  "bc/v4/longs.proto": proto3Strings,
};
