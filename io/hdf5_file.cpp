#include "io/hdf5_file.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.hpp"

namespace hpt::io {

hid_t stored_type(H5Element element) {
  switch (element) {
    case H5Element::Float32:
      return H5T_IEEE_F32LE;
    case H5Element::Float64:
      return H5T_IEEE_F64LE;
    case H5Element::Int32:
      return H5T_STD_I32LE;
    case H5Element::Int64:
      return H5T_STD_I64LE;
  }
  throw InternalError("unknown H5Element");
}

hid_t memory_type(H5Element element) {
  switch (element) {
    case H5Element::Float32:
      return H5T_NATIVE_FLOAT;
    case H5Element::Float64:
      return H5T_NATIVE_DOUBLE;
    case H5Element::Int32:
      return H5T_NATIVE_INT;
    case H5Element::Int64:
      return H5T_NATIVE_INT64;
  }
  throw InternalError("unknown H5Element");
}

namespace {

// Same class, width and signedness: then reading converts at most the byte order, exactly.
bool type_matches(hid_t type, H5Element element) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  const bool is_float = element == H5Element::Float32 || element == H5Element::Float64;
  if (size != element_size(element)) return false;
  if (is_float) return cls == H5T_FLOAT;
  return cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2;
}

std::string describe_type(hid_t type) {
  const std::string bits = std::to_string(8 * H5Tget_size(type));
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_2 ? "int" : "uint") + bits;
    case H5T_FLOAT:
      return "float" + bits;
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_ARRAY:
      return "array";
    case H5T_VLEN:
      return "variable-length sequence";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_REFERENCE:
      return "reference";
    case H5T_BITFIELD:
      return "bitfield";
    default:
      return "unknown type";
  }
}

// {} for a scalar space; {0} for a null (empty) space.
std::vector<std::size_t> space_shape(hid_t space) {
  const H5S_class_t cls = H5Sget_simple_extent_type(space);
  if (cls == H5S_SCALAR) return {};
  if (cls == H5S_NULL) return {0};
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(rank > 0 ? rank : 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return std::vector<std::size_t>(dims.begin(), dims.end());
}

std::size_t element_count(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (const std::size_t d : shape) n *= d;
  return n;
}

H5DataspaceId make_space(const std::vector<std::size_t>& shape) {
  if (shape.empty()) return H5DataspaceId(H5Screate(H5S_SCALAR));
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  return H5DataspaceId(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
}

// Variable-length UTF-8 string type (what h5py writes for str attributes).
H5DatatypeId make_vl_string_type() {
  H5DatatypeId type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

// Property lists that leave timestamps out of object headers, so identical runs write identical
// files.
H5PropertyListId untimed(hid_t plist_class) {
  H5PropertyListId plist(H5Pcreate(plist_class));
  H5Pset_obj_track_times(plist.get(), 0);
  return plist;
}

// True when every link along `path` exists (H5Lexists fails on a missing intermediate group).
bool links_exist(hid_t loc, const std::string& path) {
  if (path.empty() || path == "/" || path == ".") return true;
  std::size_t pos = path[0] == '/' ? 1 : 0;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    if (next > pos) {
      const std::string prefix = path.substr(0, next);
      if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
      }
    }
    pos = next + 1;
  }
  return true;
}

// The object at `path`, or an invalid id when there is none (missing or dangling link).
H5ObjectId open_object(hid_t loc, const std::string& path) {
  if (!links_exist(loc, path)) return H5ObjectId();
  H5ObjectId object(H5Oopen(loc, path.c_str(), H5P_DEFAULT));
  if (!object) H5Eclear2(H5E_DEFAULT);
  return object;
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void require_open(const H5Object& object) {
  if (!object.valid()) throw InternalError("HDF5 object used after its file was closed or moved");
}

}  // namespace

const char* element_name(H5Element element) {
  switch (element) {
    case H5Element::Float32:
      return "float32";
    case H5Element::Float64:
      return "float64";
    case H5Element::Int32:
      return "int32";
    case H5Element::Int64:
      return "int64";
  }
  return "unknown";
}

std::size_t element_size(H5Element element) {
  return element == H5Element::Float32 || element == H5Element::Int32 ? 4 : 8;
}

std::string shape_string(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

// ---------------------------------------------------------------------------------------------
// H5Object: attributes

H5Object::H5Object(H5ObjectId id, std::string file_path, std::string path)
    : id_(std::move(id)), file_path_(std::move(file_path)), path_(std::move(path)) {
  const H5I_type_t type = id_.valid() ? H5Iget_type(id_.get()) : H5I_BADID;
  kind_ = type == H5I_DATASET ? "dataset" : type == H5I_GROUP ? "group" : "object";
}

// A copy takes one more reference on the same id, released by its own H5Oclose.
H5Object::H5Object(const H5Object& other)
    : id_(other.valid() && H5Iinc_ref(other.id()) >= 0 ? other.id() : H5I_INVALID_HID),
      file_path_(other.file_path_),
      path_(other.path_),
      kind_(other.kind_) {}

H5Object& H5Object::operator=(const H5Object& other) {
  if (this != &other) *this = H5Object(other);
  return *this;
}

std::string H5Object::describe() const {
  return "file '" + file_path_ + "': " + kind_ + " '" + path_ + "'";
}

bool H5Object::has_attribute(const std::string& name) const {
  require_open(*this);
  const htri_t exists = H5Aexists(id(), name.c_str());
  if (exists < 0) throw_hdf5_error(describe() + ": cannot look up attribute '" + name + "'");
  return exists > 0;
}

namespace {
herr_t collect_attribute_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> H5Object::list_attributes() const {
  require_open(*this);
  std::vector<std::string> names;
  if (H5Aiterate2(id(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute_name, &names) < 0)
    throw_hdf5_error(describe() + ": cannot list attributes");
  std::sort(names.begin(), names.end());
  return names;
}

H5AttributeId H5Object::open_attribute(const std::string& name, const char* expected) const {
  if (!has_attribute(name))
    throw InputError(describe() + " has no attribute '" + name + "' (expected " + expected + ")");
  H5AttributeId attr(H5Aopen(id(), name.c_str(), H5P_DEFAULT));
  if (!attr) throw_hdf5_error(describe() + ": cannot open attribute '" + name + "'");
  return attr;
}

namespace {

// Creates attribute `name` on `loc` (replacing one of that name) and writes `data` into it.
void write_attribute(const H5Object& object, const std::string& name, hid_t stored_type,
                     hid_t mem_type, const H5DataspaceId& space, const void* data) {
  require_open(object);
  if (object.has_attribute(name) && H5Adelete(object.id(), name.c_str()) < 0)
    throw_hdf5_error(object.describe() + ": cannot replace attribute '" + name + "'");
  H5AttributeId attr(
      H5Acreate2(object.id(), name.c_str(), stored_type, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || (data != nullptr && H5Awrite(attr.get(), mem_type, data) < 0))
    throw_hdf5_error(object.describe() + ": cannot write attribute '" + name + "'");
}

// Number of values in an attribute (scalar: 1, 1-D: its length, null: 0); InputError for rank > 1.
std::size_t attribute_count(const H5Object& object, const std::string& name, hid_t attr) {
  H5DataspaceId space(H5Aget_space(attr));
  if (!space) throw_hdf5_error(object.describe() + ": cannot read attribute '" + name + "'");
  const std::vector<std::size_t> shape = space_shape(space.get());
  if (shape.size() > 1)
    throw InputError(object.describe() + ": attribute '" + name + "' has shape " +
                     shape_string(shape) + ", expected a single value or a 1-D list");
  return element_count(shape);
}

void require_single(const H5Object& object, const std::string& name, hid_t attr,
                    const std::string& type) {
  const std::size_t n = attribute_count(object, name, attr);
  if (n != 1)
    throw InputError(object.describe() + ": attribute '" + name + "' holds " + std::to_string(n) +
                     " values of type " + type + ", expected a single value");
}

}  // namespace

void H5Object::write_string_attribute(const std::string& name, const std::string& value) {
  H5DatatypeId type = make_vl_string_type();
  H5DataspaceId space(H5Screate(H5S_SCALAR));
  const char* text = value.c_str();
  write_attribute(*this, name, type.get(), type.get(), space, &text);
}

void H5Object::write_int_attribute(const std::string& name, std::int64_t value) {
  H5DataspaceId space(H5Screate(H5S_SCALAR));
  write_attribute(*this, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space, &value);
}

void H5Object::write_double_attribute(const std::string& name, double value) {
  H5DataspaceId space(H5Screate(H5S_SCALAR));
  write_attribute(*this, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space, &value);
}

void H5Object::write_vector_attribute_raw(const std::string& name, H5Element element,
                                          const void* data, std::size_t count) {
  // An empty list is a null dataspace: HDF5 attributes cannot have a zero-sized simple extent.
  H5DataspaceId space(count == 0 ? H5Screate(H5S_NULL) : make_space({count}).release());
  write_attribute(*this, name, stored_type(element), memory_type(element), space,
                  count == 0 ? nullptr : data);
}

std::string H5Object::read_string_attribute(const std::string& name) const {
  H5AttributeId attr = open_attribute(name, "a string");
  H5DatatypeId type(H5Aget_type(attr.get()));
  if (!type) throw_hdf5_error(describe() + ": cannot read attribute '" + name + "'");
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw InputError(describe() + ": attribute '" + name + "' is of type " +
                     describe_type(type.get()) + ", expected a string");
  require_single(*this, name, attr.get(), "string");
  std::string value;
  if (H5Tis_variable_str(type.get()) > 0) {
    H5DatatypeId mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Aread(attr.get(), mem.get(), &text) < 0)
      throw_hdf5_error(describe() + ": cannot read attribute '" + name + "'");
    if (text != nullptr) value = text;
    H5free_memory(text);
  } else {
    const std::size_t size = H5Tget_size(type.get());
    std::vector<char> buffer(size + 1, '\0');
    if (H5Aread(attr.get(), type.get(), buffer.data()) < 0)
      throw_hdf5_error(describe() + ": cannot read attribute '" + name + "'");
    value.assign(buffer.data(), strnlen(buffer.data(), size));
    if (H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD) value.erase(value.find_last_not_of(' ') + 1);
  }
  return value;
}

std::int64_t H5Object::read_int_attribute(const std::string& name) const {
  H5AttributeId attr = open_attribute(name, "an integer");
  H5DatatypeId type(H5Aget_type(attr.get()));
  if (!type || H5Tget_class(type.get()) != H5T_INTEGER)
    throw InputError(describe() + ": attribute '" + name + "' is of type " +
                     (type ? describe_type(type.get()) : std::string("unknown")) +
                     ", expected an integer");
  require_single(*this, name, attr.get(), describe_type(type.get()));
  std::int64_t value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0)
    throw_hdf5_error(describe() + ": cannot read attribute '" + name + "'");
  return value;
}

double H5Object::read_double_attribute(const std::string& name) const {
  H5AttributeId attr = open_attribute(name, "a number");
  H5DatatypeId type(H5Aget_type(attr.get()));
  const H5T_class_t cls = type ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw InputError(describe() + ": attribute '" + name + "' is of type " +
                     (type ? describe_type(type.get()) : std::string("unknown")) +
                     ", expected a number");
  require_single(*this, name, attr.get(), describe_type(type.get()));
  double value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    throw_hdf5_error(describe() + ": cannot read attribute '" + name + "'");
  return value;
}

std::size_t H5Object::vector_attribute_size(const std::string& name, H5Element element) const {
  const std::string expected = std::string("a list of ") + element_name(element);
  H5AttributeId attr = open_attribute(name, expected.c_str());
  H5DatatypeId type(H5Aget_type(attr.get()));
  if (!type || !type_matches(type.get(), element))
    throw InputError(describe() + ": attribute '" + name + "' is of type " +
                     (type ? describe_type(type.get()) : std::string("unknown")) + ", expected " +
                     expected);
  return attribute_count(*this, name, attr.get());
}

void H5Object::read_vector_attribute_raw(const std::string& name, H5Element element, void* data,
                                         std::size_t count) const {
  const std::size_t stored = vector_attribute_size(name, element);
  HPT_REQUIRE(stored == count, "attribute '" + name + "' holds " + std::to_string(stored) +
                                   " values, buffer has " + std::to_string(count));
  if (count == 0) return;
  H5AttributeId attr = open_attribute(name, element_name(element));
  if (H5Aread(attr.get(), memory_type(element), data) < 0)
    throw_hdf5_error(describe() + ": cannot read attribute '" + name + "'");
}

// ---------------------------------------------------------------------------------------------
// H5Dataset

std::vector<std::size_t> H5Dataset::shape() const {
  require_open(*this);
  H5DataspaceId space(H5Dget_space(id()));
  if (!space) throw_hdf5_error(describe() + ": cannot read its shape");
  return space_shape(space.get());
}

std::uint64_t H5Dataset::stored_bytes() const {
  return std::uint64_t(H5Dget_storage_size(id()));
}

std::string H5Dataset::element_description() const {
  require_open(*this);
  H5DatatypeId type(H5Dget_type(id()));
  if (!type) throw_hdf5_error(describe() + ": cannot read its element type");
  return describe_type(type.get());
}

namespace {

std::string array_description(const std::string& element, const std::vector<std::size_t>& shape) {
  return element + " array of shape " + shape_string(shape);
}

}  // namespace

void H5Dataset::check_element(H5Element element) const {
  require_open(*this);
  H5DatatypeId type(H5Dget_type(id()));
  if (!type) throw_hdf5_error(describe() + ": cannot read its element type");
  if (!type_matches(type.get(), element))
    throw InputError(describe() + " has the wrong element type: found " +
                     array_description(describe_type(type.get()), shape()) + ", expected " +
                     element_name(element));
}

void H5Dataset::check_rank(H5Element element, std::size_t rank) const {
  check_element(element);
  const std::vector<std::size_t> found = shape();
  if (found.size() != rank)
    throw InputError(describe() + " has the wrong rank: found " +
                     array_description(element_name(element), found) + " (rank " +
                     std::to_string(found.size()) + "), expected a rank-" + std::to_string(rank) +
                     " " + element_name(element) + " array");
}

void H5Dataset::check(H5Element element, const std::vector<std::size_t>& expected) const {
  require_open(*this);
  H5DatatypeId type(H5Dget_type(id()));
  if (!type) throw_hdf5_error(describe() + ": cannot read its element type");
  const std::vector<std::size_t> found = shape();
  const char* problem = !type_matches(type.get(), element) ? "element type"
                        : found.size() != expected.size()  ? "rank"
                        : found != expected                ? "shape"
                                                           : nullptr;
  if (problem != nullptr)
    throw InputError(describe() + " has the wrong " + problem + ": found " +
                     array_description(describe_type(type.get()), found) + ", expected " +
                     array_description(element_name(element), expected));
}

void H5Dataset::read(H5Element element, void* data,
                     const std::vector<std::size_t>& expected) const {
  check(element, expected);
  if (element_count(expected) == 0) return;  // HDF5 rejects a null buffer even for no elements
  if (H5Dread(id(), memory_type(element), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw_hdf5_error(describe() + ": cannot read its data (file damaged?)");
}

// ---------------------------------------------------------------------------------------------
// H5Group

std::string H5Group::child_path(const std::string& path) const {
  std::string joined = path;
  if (path.empty() || path[0] != '/') joined = (path_ == "/" ? "/" : path_ + "/") + path;
  while (joined.size() > 1 && joined.back() == '/') joined.pop_back();
  return joined;
}

bool H5Group::has_group(const std::string& path) const {
  require_open(*this);
  H5ObjectId object = open_object(id(), path);
  return object && H5Iget_type(object.get()) == H5I_GROUP;
}

bool H5Group::has_dataset(const std::string& path) const {
  require_open(*this);
  H5ObjectId object = open_object(id(), path);
  return object && H5Iget_type(object.get()) == H5I_DATASET;
}

namespace {

std::vector<std::string> list_members(const H5Group& group, H5I_type_t kind) {
  require_open(group);
  H5G_info_t info;
  if (H5Gget_info(group.id(), &info) < 0) throw_hdf5_error(group.describe() + ": cannot list");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t length =
        H5Lget_name_by_idx(group.id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (length < 0) throw_hdf5_error(group.describe() + ": cannot list");
    std::string name(static_cast<std::size_t>(length), '\0');
    H5Lget_name_by_idx(group.id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1,
                       H5P_DEFAULT);
    H5ObjectId object = open_object(group.id(), name);
    if (object && H5Iget_type(object.get()) == kind) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> H5Group::list_datasets() const {
  return list_members(*this, H5I_DATASET);
}

std::vector<std::string> H5Group::list_groups() const {
  return list_members(*this, H5I_GROUP);
}

H5Group H5Group::open_group(const std::string& path) const {
  require_open(*this);
  H5ObjectId object = open_object(id(), path);
  if (!object || H5Iget_type(object.get()) != H5I_GROUP)
    throw InputError("file '" + file_path_ + "': group '" + child_path(path) + "' " +
                     (object ? "is not a group" : "not found"));
  return H5Group(std::move(object), file_path_, child_path(path));
}

H5Group H5Group::create_group(const std::string& path) {
  require_open(*this);
  H5PropertyListId gcpl = untimed(H5P_GROUP_CREATE);
  // One level at a time, so intermediate groups get the same creation properties.
  std::size_t pos = !path.empty() && path[0] == '/' ? 1 : 0;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    if (next > pos) {
      const std::string prefix = path.substr(0, next);
      H5ObjectId object = open_object(id(), prefix);
      if (!object) {
        H5GroupId created(H5Gcreate2(id(), prefix.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT));
        if (!created)
          throw_hdf5_error("file '" + file_path_ + "': cannot create group '" + child_path(prefix) +
                           "'");
      } else if (H5Iget_type(object.get()) != H5I_GROUP) {
        throw InputError("file '" + file_path_ + "': cannot create group '" + child_path(path) +
                         "': '" + child_path(prefix) + "' exists and is not a group");
      }
    }
    pos = next + 1;
  }
  return open_group(path);
}

H5Dataset H5Group::open_dataset(const std::string& path) const {
  require_open(*this);
  H5ObjectId object = open_object(id(), path);
  if (!object || H5Iget_type(object.get()) != H5I_DATASET)
    throw InputError("file '" + file_path_ + "': dataset '" + child_path(path) + "' " +
                     (object ? "is not a dataset" : "not found"));
  return H5Dataset(std::move(object), file_path_, child_path(path));
}

H5Dataset H5Group::open_dataset_checked(const std::string& path, H5Element element,
                                        std::size_t rank) const {
  require_open(*this);
  H5ObjectId object = open_object(id(), path);
  if (!object || H5Iget_type(object.get()) != H5I_DATASET)
    throw InputError("file '" + file_path_ + "': dataset '" + child_path(path) + "' " +
                     (object ? "is not a dataset" : "not found") + " (expected a rank-" +
                     std::to_string(rank) + " " + element_name(element) + " array)");
  H5Dataset dataset(std::move(object), file_path_, child_path(path));
  dataset.check_rank(element, rank);
  return dataset;
}

void H5Group::remove(const std::string& path) {
  require_open(*this);
  if (!open_object(id(), path))
    throw InputError("file '" + file_path_ + "': cannot remove '" + child_path(path) +
                     "': not found");
  if (H5Ldelete(id(), path.c_str(), H5P_DEFAULT) < 0)
    throw_hdf5_error("file '" + file_path_ + "': cannot remove '" + child_path(path) + "'");
}

H5Dataset H5Group::write_dataset(const std::string& path, H5Element element, const void* data,
                                 const std::vector<std::size_t>& shape) {
  require_open(*this);
  const std::string full = child_path(path);
  if (H5ObjectId existing = open_object(id(), path)) {
    if (H5Iget_type(existing.get()) != H5I_DATASET)
      throw InputError("file '" + file_path_ + "': cannot write dataset '" + full +
                       "': a group of that name exists");
    existing.reset();
    remove(path);
  }
  const std::string parent = parent_of(path);
  if (!parent.empty() && parent != "/") create_group(parent);
  H5DataspaceId space = make_space(shape);
  H5PropertyListId dcpl = untimed(H5P_DATASET_CREATE);
  H5DatasetId dataset(H5Dcreate2(id(), path.c_str(), stored_type(element), space.get(), H5P_DEFAULT,
                                 dcpl.get(), H5P_DEFAULT));
  if (!dataset) throw_hdf5_error("file '" + file_path_ + "': cannot create dataset '" + full + "'");
  if (element_count(shape) > 0 &&
      H5Dwrite(dataset.get(), memory_type(element), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw_hdf5_error("file '" + file_path_ + "': cannot write dataset '" + full + "'");
  return open_dataset(path);
}

void H5Group::read_dataset(const std::string& path, H5Element element, void* data,
                           const std::vector<std::size_t>& expected_shape) const {
  require_open(*this);
  H5ObjectId object = open_object(id(), path);
  if (!object || H5Iget_type(object.get()) != H5I_DATASET)
    throw InputError("file '" + file_path_ + "': dataset '" + child_path(path) + "' " +
                     (object ? "is not a dataset" : "not found") + " (expected a " +
                     element_name(element) + " array of shape " + shape_string(expected_shape) +
                     ")");
  H5Dataset(std::move(object), file_path_, child_path(path)).read(element, data, expected_shape);
}

// ---------------------------------------------------------------------------------------------
// H5File

namespace {

H5PropertyListId file_access() {
  H5PropertyListId fapl(H5Pcreate(H5P_FILE_ACCESS));
  // Closing the file closes its objects, so commit/close really release the file.
  H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
#if H5_VERSION_GE(1, 12, 1) || (H5_VERSION_GE(1, 10, 7) && !H5_VERSION_GE(1, 12, 0))
  // Keep file locking, but do not fail on file systems without it (Lustre, NFS on HPC systems).
  H5Pset_file_locking(fapl.get(), 1, 1);
#endif
  return fapl;
}

}  // namespace

H5File H5File::create(const std::string& path) {
  silence_hdf5_errors();
  H5PropertyListId fapl = file_access();
  H5FileId file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!file) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      H5Eclear2(H5E_DEFAULT);
      throw InputError("cannot create file '" + path + "': directory '" + parent.string() +
                       "' does not exist");
    }
    throw_hdf5_error("cannot create file '" + path + "'");
  }
  H5File result;
  result.root_ = H5Group(H5ObjectId(H5Oopen(file.get(), "/", H5P_DEFAULT)), path, "/");
  if (!result.root_.valid()) throw_hdf5_error("cannot create file '" + path + "'");
  result.file_ = std::move(file);
  result.path_ = path;
  return result;
}

H5File H5File::open(const std::string& path, unsigned flags) {
  silence_hdf5_errors();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw InputError("file '" + path + "' does not exist (expected an HDF5 file)");
  if (std::filesystem::is_directory(status))
    throw InputError("'" + path + "' is a directory, expected an HDF5 file");
#if H5_VERSION_GE(1, 12, 0)
  const htri_t is_hdf5 = H5Fis_accessible(path.c_str(), H5P_DEFAULT);
#else
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
#endif
  if (is_hdf5 < 0) throw_hdf5_error("file '" + path + "' cannot be read");
  if (is_hdf5 == 0)
    throw InputError("file '" + path +
                     "' is not an HDF5 file (no HDF5 signature; empty, cut short or of another "
                     "format?)");
  H5PropertyListId fapl = file_access();
  H5FileId file(H5Fopen(path.c_str(), flags, fapl.get()));
  if (!file)
    throw_hdf5_error("file '" + path +
                     "' is an HDF5 file but cannot be opened (truncated, damaged, not writable or "
                     "in use by another process?)");
  H5File result;
  result.root_ = H5Group(H5ObjectId(H5Oopen(file.get(), "/", H5P_DEFAULT)), path, "/");
  if (!result.root_.valid())
    throw_hdf5_error("file '" + path + "': cannot open its root group (file damaged?)");
  result.file_ = std::move(file);
  result.path_ = path;
  return result;
}

H5File H5File::open_read(const std::string& path) {
  return open(path, H5F_ACC_RDONLY);
}

H5File H5File::open_readwrite(const std::string& path) {
  return open(path, H5F_ACC_RDWR);
}

void H5File::flush() {
  HPT_REQUIRE(is_open(), "flush of a closed H5File");
  if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0)
    throw_hdf5_error("file '" + path_ + "': cannot write (disk full or file removed?)");
}

void H5File::close() {
  if (!is_open()) return;
  root_ = H5Group();
  if (!file_.close())
    throw_hdf5_error("file '" + path_ + "': cannot be written completely (disk full?)");
}

}  // namespace hpt::io
