//! cel-go's overload ids of the standard library (its `overloads` package), said once.
//!
//! An overload id names one signature of a function (`add_int64` is `int + int`); the
//! declarations ([`crate::stdlib`]), the runtime's implementations, the cost tables and the
//! lowering all refer to overloads by these constants, and [`ALL`] lists every id the
//! standard library declares (a test keeps the two equal). Library overloads (extensions,
//! Kubernetes) are declared and implemented beside each other in their own modules.

/// `_+_`: `add_bytes`.
pub const ADD_BYTES: &str = "add_bytes";
/// `_+_`: `add_double`.
pub const ADD_DOUBLE: &str = "add_double";
/// `_+_`: `add_duration_duration`.
pub const ADD_DURATION_DURATION: &str = "add_duration_duration";
/// `_+_`: `add_duration_timestamp`.
pub const ADD_DURATION_TIMESTAMP: &str = "add_duration_timestamp";
/// `_+_`: `add_int64`.
pub const ADD_INT64: &str = "add_int64";
/// `_+_`: `add_list`.
pub const ADD_LIST: &str = "add_list";
/// `_+_`: `add_string`.
pub const ADD_STRING: &str = "add_string";
/// `_+_`: `add_timestamp_duration`.
pub const ADD_TIMESTAMP_DURATION: &str = "add_timestamp_duration";
/// `_+_`: `add_uint64`.
pub const ADD_UINT64: &str = "add_uint64";
/// `bool`: `bool_to_bool`.
pub const BOOL_TO_BOOL: &str = "bool_to_bool";
/// `string`: `bool_to_string`.
pub const BOOL_TO_STRING: &str = "bool_to_string";
/// `size`: `bytes_size`.
pub const BYTES_SIZE: &str = "bytes_size";
/// `bytes`: `bytes_to_bytes`.
pub const BYTES_TO_BYTES: &str = "bytes_to_bytes";
/// `string`: `bytes_to_string`.
pub const BYTES_TO_STRING: &str = "bytes_to_string";
/// `_?_:_`: `conditional`.
pub const CONDITIONAL: &str = "conditional";
/// `contains`: `contains_string`.
pub const CONTAINS_STRING: &str = "contains_string";
/// `_/_`: `divide_double`.
pub const DIVIDE_DOUBLE: &str = "divide_double";
/// `_/_`: `divide_int64`.
pub const DIVIDE_INT64: &str = "divide_int64";
/// `_/_`: `divide_uint64`.
pub const DIVIDE_UINT64: &str = "divide_uint64";
/// `double`: `double_to_double`.
pub const DOUBLE_TO_DOUBLE: &str = "double_to_double";
/// `int`: `double_to_int64`.
pub const DOUBLE_TO_INT64: &str = "double_to_int64";
/// `string`: `double_to_string`.
pub const DOUBLE_TO_STRING: &str = "double_to_string";
/// `uint`: `double_to_uint64`.
pub const DOUBLE_TO_UINT64: &str = "double_to_uint64";
/// `duration`: `duration_to_duration`.
pub const DURATION_TO_DURATION: &str = "duration_to_duration";
/// `getHours`: `duration_to_hours`.
pub const DURATION_TO_HOURS: &str = "duration_to_hours";
/// `int`: `duration_to_int64`.
pub const DURATION_TO_INT64: &str = "duration_to_int64";
/// `getMilliseconds`: `duration_to_milliseconds`.
pub const DURATION_TO_MILLISECONDS: &str = "duration_to_milliseconds";
/// `getMinutes`: `duration_to_minutes`.
pub const DURATION_TO_MINUTES: &str = "duration_to_minutes";
/// `getSeconds`: `duration_to_seconds`.
pub const DURATION_TO_SECONDS: &str = "duration_to_seconds";
/// `string`: `duration_to_string`.
pub const DURATION_TO_STRING: &str = "duration_to_string";
/// `endsWith`: `ends_with_string`.
pub const ENDS_WITH_STRING: &str = "ends_with_string";
/// `_==_`: `equals`.
pub const EQUALS: &str = "equals";
/// `_>_`: `greater_bool`.
pub const GREATER_BOOL: &str = "greater_bool";
/// `_>_`: `greater_bytes`.
pub const GREATER_BYTES: &str = "greater_bytes";
/// `_>_`: `greater_double`.
pub const GREATER_DOUBLE: &str = "greater_double";
/// `_>_`: `greater_double_int64`.
pub const GREATER_DOUBLE_INT64: &str = "greater_double_int64";
/// `_>_`: `greater_double_uint64`.
pub const GREATER_DOUBLE_UINT64: &str = "greater_double_uint64";
/// `_>_`: `greater_duration`.
pub const GREATER_DURATION: &str = "greater_duration";
/// `_>=_`: `greater_equals_bool`.
pub const GREATER_EQUALS_BOOL: &str = "greater_equals_bool";
/// `_>=_`: `greater_equals_bytes`.
pub const GREATER_EQUALS_BYTES: &str = "greater_equals_bytes";
/// `_>=_`: `greater_equals_double`.
pub const GREATER_EQUALS_DOUBLE: &str = "greater_equals_double";
/// `_>=_`: `greater_equals_double_int64`.
pub const GREATER_EQUALS_DOUBLE_INT64: &str = "greater_equals_double_int64";
/// `_>=_`: `greater_equals_double_uint64`.
pub const GREATER_EQUALS_DOUBLE_UINT64: &str = "greater_equals_double_uint64";
/// `_>=_`: `greater_equals_duration`.
pub const GREATER_EQUALS_DURATION: &str = "greater_equals_duration";
/// `_>=_`: `greater_equals_int64`.
pub const GREATER_EQUALS_INT64: &str = "greater_equals_int64";
/// `_>=_`: `greater_equals_int64_double`.
pub const GREATER_EQUALS_INT64_DOUBLE: &str = "greater_equals_int64_double";
/// `_>=_`: `greater_equals_int64_uint64`.
pub const GREATER_EQUALS_INT64_UINT64: &str = "greater_equals_int64_uint64";
/// `_>=_`: `greater_equals_string`.
pub const GREATER_EQUALS_STRING: &str = "greater_equals_string";
/// `_>=_`: `greater_equals_timestamp`.
pub const GREATER_EQUALS_TIMESTAMP: &str = "greater_equals_timestamp";
/// `_>=_`: `greater_equals_uint64`.
pub const GREATER_EQUALS_UINT64: &str = "greater_equals_uint64";
/// `_>=_`: `greater_equals_uint64_double`.
pub const GREATER_EQUALS_UINT64_DOUBLE: &str = "greater_equals_uint64_double";
/// `_>=_`: `greater_equals_uint64_int64`.
pub const GREATER_EQUALS_UINT64_INT64: &str = "greater_equals_uint64_int64";
/// `_>_`: `greater_int64`.
pub const GREATER_INT64: &str = "greater_int64";
/// `_>_`: `greater_int64_double`.
pub const GREATER_INT64_DOUBLE: &str = "greater_int64_double";
/// `_>_`: `greater_int64_uint64`.
pub const GREATER_INT64_UINT64: &str = "greater_int64_uint64";
/// `_>_`: `greater_string`.
pub const GREATER_STRING: &str = "greater_string";
/// `_>_`: `greater_timestamp`.
pub const GREATER_TIMESTAMP: &str = "greater_timestamp";
/// `_>_`: `greater_uint64`.
pub const GREATER_UINT64: &str = "greater_uint64";
/// `_>_`: `greater_uint64_double`.
pub const GREATER_UINT64_DOUBLE: &str = "greater_uint64_double";
/// `_>_`: `greater_uint64_int64`.
pub const GREATER_UINT64_INT64: &str = "greater_uint64_int64";
/// `@in`: `in_list`.
pub const IN_LIST: &str = "in_list";
/// `@in`: `in_map`.
pub const IN_MAP: &str = "in_map";
/// `_[_]`: `index_list`.
pub const INDEX_LIST: &str = "index_list";
/// `_[_]`: `index_map`.
pub const INDEX_MAP: &str = "index_map";
/// `double`: `int64_to_double`.
pub const INT64_TO_DOUBLE: &str = "int64_to_double";
/// `duration`: `int64_to_duration`.
pub const INT64_TO_DURATION: &str = "int64_to_duration";
/// `int`: `int64_to_int64`.
pub const INT64_TO_INT64: &str = "int64_to_int64";
/// `string`: `int64_to_string`.
pub const INT64_TO_STRING: &str = "int64_to_string";
/// `timestamp`: `int64_to_timestamp`.
pub const INT64_TO_TIMESTAMP: &str = "int64_to_timestamp";
/// `uint`: `int64_to_uint64`.
pub const INT64_TO_UINT64: &str = "int64_to_uint64";
/// `_<_`: `less_bool`.
pub const LESS_BOOL: &str = "less_bool";
/// `_<_`: `less_bytes`.
pub const LESS_BYTES: &str = "less_bytes";
/// `_<_`: `less_double`.
pub const LESS_DOUBLE: &str = "less_double";
/// `_<_`: `less_double_int64`.
pub const LESS_DOUBLE_INT64: &str = "less_double_int64";
/// `_<_`: `less_double_uint64`.
pub const LESS_DOUBLE_UINT64: &str = "less_double_uint64";
/// `_<_`: `less_duration`.
pub const LESS_DURATION: &str = "less_duration";
/// `_<=_`: `less_equals_bool`.
pub const LESS_EQUALS_BOOL: &str = "less_equals_bool";
/// `_<=_`: `less_equals_bytes`.
pub const LESS_EQUALS_BYTES: &str = "less_equals_bytes";
/// `_<=_`: `less_equals_double`.
pub const LESS_EQUALS_DOUBLE: &str = "less_equals_double";
/// `_<=_`: `less_equals_double_int64`.
pub const LESS_EQUALS_DOUBLE_INT64: &str = "less_equals_double_int64";
/// `_<=_`: `less_equals_double_uint64`.
pub const LESS_EQUALS_DOUBLE_UINT64: &str = "less_equals_double_uint64";
/// `_<=_`: `less_equals_duration`.
pub const LESS_EQUALS_DURATION: &str = "less_equals_duration";
/// `_<=_`: `less_equals_int64`.
pub const LESS_EQUALS_INT64: &str = "less_equals_int64";
/// `_<=_`: `less_equals_int64_double`.
pub const LESS_EQUALS_INT64_DOUBLE: &str = "less_equals_int64_double";
/// `_<=_`: `less_equals_int64_uint64`.
pub const LESS_EQUALS_INT64_UINT64: &str = "less_equals_int64_uint64";
/// `_<=_`: `less_equals_string`.
pub const LESS_EQUALS_STRING: &str = "less_equals_string";
/// `_<=_`: `less_equals_timestamp`.
pub const LESS_EQUALS_TIMESTAMP: &str = "less_equals_timestamp";
/// `_<=_`: `less_equals_uint64`.
pub const LESS_EQUALS_UINT64: &str = "less_equals_uint64";
/// `_<=_`: `less_equals_uint64_double`.
pub const LESS_EQUALS_UINT64_DOUBLE: &str = "less_equals_uint64_double";
/// `_<=_`: `less_equals_uint64_int64`.
pub const LESS_EQUALS_UINT64_INT64: &str = "less_equals_uint64_int64";
/// `_<_`: `less_int64`.
pub const LESS_INT64: &str = "less_int64";
/// `_<_`: `less_int64_double`.
pub const LESS_INT64_DOUBLE: &str = "less_int64_double";
/// `_<_`: `less_int64_uint64`.
pub const LESS_INT64_UINT64: &str = "less_int64_uint64";
/// `_<_`: `less_string`.
pub const LESS_STRING: &str = "less_string";
/// `_<_`: `less_timestamp`.
pub const LESS_TIMESTAMP: &str = "less_timestamp";
/// `_<_`: `less_uint64`.
pub const LESS_UINT64: &str = "less_uint64";
/// `_<_`: `less_uint64_double`.
pub const LESS_UINT64_DOUBLE: &str = "less_uint64_double";
/// `_<_`: `less_uint64_int64`.
pub const LESS_UINT64_INT64: &str = "less_uint64_int64";
/// `first`: `list_first`.
pub const LIST_FIRST: &str = "list_first";
/// `last`: `list_last`.
pub const LIST_LAST: &str = "list_last";
/// `_[?_]`: `list_optindex_optional_int`.
pub const LIST_OPTINDEX_OPTIONAL_INT: &str = "list_optindex_optional_int";
/// `size`: `list_size`.
pub const LIST_SIZE: &str = "list_size";
/// `_&&_`: `logical_and`.
pub const LOGICAL_AND: &str = "logical_and";
/// `!_`: `logical_not`.
pub const LOGICAL_NOT: &str = "logical_not";
/// `_||_`: `logical_or`.
pub const LOGICAL_OR: &str = "logical_or";
/// `_[?_]`: `map_optindex_optional_value`.
pub const MAP_OPTINDEX_OPTIONAL_VALUE: &str = "map_optindex_optional_value";
/// `size`: `map_size`.
pub const MAP_SIZE: &str = "map_size";
/// `matches`: `matches`.
pub const MATCHES: &str = "matches";
/// `matches`: `matches_string`.
pub const MATCHES_STRING: &str = "matches_string";
/// `_%_`: `modulo_int64`.
pub const MODULO_INT64: &str = "modulo_int64";
/// `_%_`: `modulo_uint64`.
pub const MODULO_UINT64: &str = "modulo_uint64";
/// `_*_`: `multiply_double`.
pub const MULTIPLY_DOUBLE: &str = "multiply_double";
/// `_*_`: `multiply_int64`.
pub const MULTIPLY_INT64: &str = "multiply_int64";
/// `_*_`: `multiply_uint64`.
pub const MULTIPLY_UINT64: &str = "multiply_uint64";
/// `-_`: `negate_double`.
pub const NEGATE_DOUBLE: &str = "negate_double";
/// `-_`: `negate_int64`.
pub const NEGATE_INT64: &str = "negate_int64";
/// `_!=_`: `not_equals`.
pub const NOT_EQUALS: &str = "not_equals";
/// `@not_strictly_false`: `not_strictly_false`.
pub const NOT_STRICTLY_FALSE: &str = "not_strictly_false";
/// `hasValue`: `optional_hasValue`.
pub const OPTIONAL_HAS_VALUE: &str = "optional_hasValue";
/// `_[_]`: `optional_list_index_int`.
pub const OPTIONAL_LIST_INDEX_INT: &str = "optional_list_index_int";
/// `_[?_]`: `optional_list_optindex_optional_int`.
pub const OPTIONAL_LIST_OPTINDEX_OPTIONAL_INT: &str = "optional_list_optindex_optional_int";
/// `_[_]`: `optional_map_index_value`.
pub const OPTIONAL_MAP_INDEX_VALUE: &str = "optional_map_index_value";
/// `_[?_]`: `optional_map_optindex_optional_value`.
pub const OPTIONAL_MAP_OPTINDEX_OPTIONAL_VALUE: &str = "optional_map_optindex_optional_value";
/// `optional.none`: `optional_none`.
pub const OPTIONAL_NONE: &str = "optional_none";
/// `optional.of`: `optional_of`.
pub const OPTIONAL_OF: &str = "optional_of";
/// `optional.ofNonZeroValue`: `optional_ofNonZeroValue`.
pub const OPTIONAL_OF_NON_ZERO_VALUE: &str = "optional_ofNonZeroValue";
/// `orValue`: `optional_orValue_value`.
pub const OPTIONAL_OR_VALUE_VALUE: &str = "optional_orValue_value";
/// `or`: `optional_or_optional`.
pub const OPTIONAL_OR_OPTIONAL: &str = "optional_or_optional";
/// `optional.unwrap`: `optional_unwrap`.
pub const OPTIONAL_UNWRAP: &str = "optional_unwrap";
/// `unwrapOpt`: `optional_unwrapOpt`.
pub const OPTIONAL_UNWRAP_OPT: &str = "optional_unwrapOpt";
/// `value`: `optional_value`.
pub const OPTIONAL_VALUE: &str = "optional_value";
/// `_?._`: `select_optional_field`.
pub const SELECT_OPTIONAL_FIELD: &str = "select_optional_field";
/// `size`: `size_bytes`.
pub const SIZE_BYTES: &str = "size_bytes";
/// `size`: `size_list`.
pub const SIZE_LIST: &str = "size_list";
/// `size`: `size_map`.
pub const SIZE_MAP: &str = "size_map";
/// `size`: `size_string`.
pub const SIZE_STRING: &str = "size_string";
/// `startsWith`: `starts_with_string`.
pub const STARTS_WITH_STRING: &str = "starts_with_string";
/// `size`: `string_size`.
pub const STRING_SIZE: &str = "string_size";
/// `bool`: `string_to_bool`.
pub const STRING_TO_BOOL: &str = "string_to_bool";
/// `bytes`: `string_to_bytes`.
pub const STRING_TO_BYTES: &str = "string_to_bytes";
/// `double`: `string_to_double`.
pub const STRING_TO_DOUBLE: &str = "string_to_double";
/// `duration`: `string_to_duration`.
pub const STRING_TO_DURATION: &str = "string_to_duration";
/// `int`: `string_to_int64`.
pub const STRING_TO_INT64: &str = "string_to_int64";
/// `string`: `string_to_string`.
pub const STRING_TO_STRING: &str = "string_to_string";
/// `timestamp`: `string_to_timestamp`.
pub const STRING_TO_TIMESTAMP: &str = "string_to_timestamp";
/// `uint`: `string_to_uint64`.
pub const STRING_TO_UINT64: &str = "string_to_uint64";
/// `_-_`: `subtract_double`.
pub const SUBTRACT_DOUBLE: &str = "subtract_double";
/// `_-_`: `subtract_duration_duration`.
pub const SUBTRACT_DURATION_DURATION: &str = "subtract_duration_duration";
/// `_-_`: `subtract_int64`.
pub const SUBTRACT_INT64: &str = "subtract_int64";
/// `_-_`: `subtract_timestamp_duration`.
pub const SUBTRACT_TIMESTAMP_DURATION: &str = "subtract_timestamp_duration";
/// `_-_`: `subtract_timestamp_timestamp`.
pub const SUBTRACT_TIMESTAMP_TIMESTAMP: &str = "subtract_timestamp_timestamp";
/// `_-_`: `subtract_uint64`.
pub const SUBTRACT_UINT64: &str = "subtract_uint64";
/// `getDayOfMonth`: `timestamp_to_day_of_month`.
pub const TIMESTAMP_TO_DAY_OF_MONTH: &str = "timestamp_to_day_of_month";
/// `getDate`: `timestamp_to_day_of_month_1_based`.
pub const TIMESTAMP_TO_DAY_OF_MONTH_1_BASED: &str = "timestamp_to_day_of_month_1_based";
/// `getDate`: `timestamp_to_day_of_month_1_based_with_tz`.
pub const TIMESTAMP_TO_DAY_OF_MONTH_1_BASED_WITH_TZ: &str =
    "timestamp_to_day_of_month_1_based_with_tz";
/// `getDayOfMonth`: `timestamp_to_day_of_month_with_tz`.
pub const TIMESTAMP_TO_DAY_OF_MONTH_WITH_TZ: &str = "timestamp_to_day_of_month_with_tz";
/// `getDayOfWeek`: `timestamp_to_day_of_week`.
pub const TIMESTAMP_TO_DAY_OF_WEEK: &str = "timestamp_to_day_of_week";
/// `getDayOfWeek`: `timestamp_to_day_of_week_with_tz`.
pub const TIMESTAMP_TO_DAY_OF_WEEK_WITH_TZ: &str = "timestamp_to_day_of_week_with_tz";
/// `getDayOfYear`: `timestamp_to_day_of_year`.
pub const TIMESTAMP_TO_DAY_OF_YEAR: &str = "timestamp_to_day_of_year";
/// `getDayOfYear`: `timestamp_to_day_of_year_with_tz`.
pub const TIMESTAMP_TO_DAY_OF_YEAR_WITH_TZ: &str = "timestamp_to_day_of_year_with_tz";
/// `getHours`: `timestamp_to_hours`.
pub const TIMESTAMP_TO_HOURS: &str = "timestamp_to_hours";
/// `getHours`: `timestamp_to_hours_with_tz`.
pub const TIMESTAMP_TO_HOURS_WITH_TZ: &str = "timestamp_to_hours_with_tz";
/// `int`: `timestamp_to_int64`.
pub const TIMESTAMP_TO_INT64: &str = "timestamp_to_int64";
/// `getMilliseconds`: `timestamp_to_milliseconds`.
pub const TIMESTAMP_TO_MILLISECONDS: &str = "timestamp_to_milliseconds";
/// `getMilliseconds`: `timestamp_to_milliseconds_with_tz`.
pub const TIMESTAMP_TO_MILLISECONDS_WITH_TZ: &str = "timestamp_to_milliseconds_with_tz";
/// `getMinutes`: `timestamp_to_minutes`.
pub const TIMESTAMP_TO_MINUTES: &str = "timestamp_to_minutes";
/// `getMinutes`: `timestamp_to_minutes_with_tz`.
pub const TIMESTAMP_TO_MINUTES_WITH_TZ: &str = "timestamp_to_minutes_with_tz";
/// `getMonth`: `timestamp_to_month`.
pub const TIMESTAMP_TO_MONTH: &str = "timestamp_to_month";
/// `getMonth`: `timestamp_to_month_with_tz`.
pub const TIMESTAMP_TO_MONTH_WITH_TZ: &str = "timestamp_to_month_with_tz";
/// `getSeconds`: `timestamp_to_seconds`.
pub const TIMESTAMP_TO_SECONDS: &str = "timestamp_to_seconds";
/// `getSeconds`: `timestamp_to_seconds_tz`.
pub const TIMESTAMP_TO_SECONDS_TZ: &str = "timestamp_to_seconds_tz";
/// `string`: `timestamp_to_string`.
pub const TIMESTAMP_TO_STRING: &str = "timestamp_to_string";
/// `timestamp`: `timestamp_to_timestamp`.
pub const TIMESTAMP_TO_TIMESTAMP: &str = "timestamp_to_timestamp";
/// `getFullYear`: `timestamp_to_year`.
pub const TIMESTAMP_TO_YEAR: &str = "timestamp_to_year";
/// `getFullYear`: `timestamp_to_year_with_tz`.
pub const TIMESTAMP_TO_YEAR_WITH_TZ: &str = "timestamp_to_year_with_tz";
/// `dyn`: `to_dyn`.
pub const TO_DYN: &str = "to_dyn";
/// `type`: `type`.
pub const TYPE: &str = "type";
/// `double`: `uint64_to_double`.
pub const UINT64_TO_DOUBLE: &str = "uint64_to_double";
/// `int`: `uint64_to_int64`.
pub const UINT64_TO_INT64: &str = "uint64_to_int64";
/// `string`: `uint64_to_string`.
pub const UINT64_TO_STRING: &str = "uint64_to_string";
/// `uint`: `uint64_to_uint64`.
pub const UINT64_TO_UINT64: &str = "uint64_to_uint64";

/// Every overload id the standard library declares (the optional-types library included).
pub const ALL: &[&str] = &[
    ADD_BYTES,
    ADD_DOUBLE,
    ADD_DURATION_DURATION,
    ADD_DURATION_TIMESTAMP,
    ADD_INT64,
    ADD_LIST,
    ADD_STRING,
    ADD_TIMESTAMP_DURATION,
    ADD_UINT64,
    BOOL_TO_BOOL,
    BOOL_TO_STRING,
    BYTES_SIZE,
    BYTES_TO_BYTES,
    BYTES_TO_STRING,
    CONDITIONAL,
    CONTAINS_STRING,
    DIVIDE_DOUBLE,
    DIVIDE_INT64,
    DIVIDE_UINT64,
    DOUBLE_TO_DOUBLE,
    DOUBLE_TO_INT64,
    DOUBLE_TO_STRING,
    DOUBLE_TO_UINT64,
    DURATION_TO_DURATION,
    DURATION_TO_HOURS,
    DURATION_TO_INT64,
    DURATION_TO_MILLISECONDS,
    DURATION_TO_MINUTES,
    DURATION_TO_SECONDS,
    DURATION_TO_STRING,
    ENDS_WITH_STRING,
    EQUALS,
    GREATER_BOOL,
    GREATER_BYTES,
    GREATER_DOUBLE,
    GREATER_DOUBLE_INT64,
    GREATER_DOUBLE_UINT64,
    GREATER_DURATION,
    GREATER_EQUALS_BOOL,
    GREATER_EQUALS_BYTES,
    GREATER_EQUALS_DOUBLE,
    GREATER_EQUALS_DOUBLE_INT64,
    GREATER_EQUALS_DOUBLE_UINT64,
    GREATER_EQUALS_DURATION,
    GREATER_EQUALS_INT64,
    GREATER_EQUALS_INT64_DOUBLE,
    GREATER_EQUALS_INT64_UINT64,
    GREATER_EQUALS_STRING,
    GREATER_EQUALS_TIMESTAMP,
    GREATER_EQUALS_UINT64,
    GREATER_EQUALS_UINT64_DOUBLE,
    GREATER_EQUALS_UINT64_INT64,
    GREATER_INT64,
    GREATER_INT64_DOUBLE,
    GREATER_INT64_UINT64,
    GREATER_STRING,
    GREATER_TIMESTAMP,
    GREATER_UINT64,
    GREATER_UINT64_DOUBLE,
    GREATER_UINT64_INT64,
    IN_LIST,
    IN_MAP,
    INDEX_LIST,
    INDEX_MAP,
    INT64_TO_DOUBLE,
    INT64_TO_DURATION,
    INT64_TO_INT64,
    INT64_TO_STRING,
    INT64_TO_TIMESTAMP,
    INT64_TO_UINT64,
    LESS_BOOL,
    LESS_BYTES,
    LESS_DOUBLE,
    LESS_DOUBLE_INT64,
    LESS_DOUBLE_UINT64,
    LESS_DURATION,
    LESS_EQUALS_BOOL,
    LESS_EQUALS_BYTES,
    LESS_EQUALS_DOUBLE,
    LESS_EQUALS_DOUBLE_INT64,
    LESS_EQUALS_DOUBLE_UINT64,
    LESS_EQUALS_DURATION,
    LESS_EQUALS_INT64,
    LESS_EQUALS_INT64_DOUBLE,
    LESS_EQUALS_INT64_UINT64,
    LESS_EQUALS_STRING,
    LESS_EQUALS_TIMESTAMP,
    LESS_EQUALS_UINT64,
    LESS_EQUALS_UINT64_DOUBLE,
    LESS_EQUALS_UINT64_INT64,
    LESS_INT64,
    LESS_INT64_DOUBLE,
    LESS_INT64_UINT64,
    LESS_STRING,
    LESS_TIMESTAMP,
    LESS_UINT64,
    LESS_UINT64_DOUBLE,
    LESS_UINT64_INT64,
    LIST_FIRST,
    LIST_LAST,
    LIST_OPTINDEX_OPTIONAL_INT,
    LIST_SIZE,
    LOGICAL_AND,
    LOGICAL_NOT,
    LOGICAL_OR,
    MAP_OPTINDEX_OPTIONAL_VALUE,
    MAP_SIZE,
    MATCHES,
    MATCHES_STRING,
    MODULO_INT64,
    MODULO_UINT64,
    MULTIPLY_DOUBLE,
    MULTIPLY_INT64,
    MULTIPLY_UINT64,
    NEGATE_DOUBLE,
    NEGATE_INT64,
    NOT_EQUALS,
    NOT_STRICTLY_FALSE,
    OPTIONAL_HAS_VALUE,
    OPTIONAL_LIST_INDEX_INT,
    OPTIONAL_LIST_OPTINDEX_OPTIONAL_INT,
    OPTIONAL_MAP_INDEX_VALUE,
    OPTIONAL_MAP_OPTINDEX_OPTIONAL_VALUE,
    OPTIONAL_NONE,
    OPTIONAL_OF,
    OPTIONAL_OF_NON_ZERO_VALUE,
    OPTIONAL_OR_VALUE_VALUE,
    OPTIONAL_OR_OPTIONAL,
    OPTIONAL_UNWRAP,
    OPTIONAL_UNWRAP_OPT,
    OPTIONAL_VALUE,
    SELECT_OPTIONAL_FIELD,
    SIZE_BYTES,
    SIZE_LIST,
    SIZE_MAP,
    SIZE_STRING,
    STARTS_WITH_STRING,
    STRING_SIZE,
    STRING_TO_BOOL,
    STRING_TO_BYTES,
    STRING_TO_DOUBLE,
    STRING_TO_DURATION,
    STRING_TO_INT64,
    STRING_TO_STRING,
    STRING_TO_TIMESTAMP,
    STRING_TO_UINT64,
    SUBTRACT_DOUBLE,
    SUBTRACT_DURATION_DURATION,
    SUBTRACT_INT64,
    SUBTRACT_TIMESTAMP_DURATION,
    SUBTRACT_TIMESTAMP_TIMESTAMP,
    SUBTRACT_UINT64,
    TIMESTAMP_TO_DAY_OF_MONTH,
    TIMESTAMP_TO_DAY_OF_MONTH_1_BASED,
    TIMESTAMP_TO_DAY_OF_MONTH_1_BASED_WITH_TZ,
    TIMESTAMP_TO_DAY_OF_MONTH_WITH_TZ,
    TIMESTAMP_TO_DAY_OF_WEEK,
    TIMESTAMP_TO_DAY_OF_WEEK_WITH_TZ,
    TIMESTAMP_TO_DAY_OF_YEAR,
    TIMESTAMP_TO_DAY_OF_YEAR_WITH_TZ,
    TIMESTAMP_TO_HOURS,
    TIMESTAMP_TO_HOURS_WITH_TZ,
    TIMESTAMP_TO_INT64,
    TIMESTAMP_TO_MILLISECONDS,
    TIMESTAMP_TO_MILLISECONDS_WITH_TZ,
    TIMESTAMP_TO_MINUTES,
    TIMESTAMP_TO_MINUTES_WITH_TZ,
    TIMESTAMP_TO_MONTH,
    TIMESTAMP_TO_MONTH_WITH_TZ,
    TIMESTAMP_TO_SECONDS,
    TIMESTAMP_TO_SECONDS_TZ,
    TIMESTAMP_TO_STRING,
    TIMESTAMP_TO_TIMESTAMP,
    TIMESTAMP_TO_YEAR,
    TIMESTAMP_TO_YEAR_WITH_TZ,
    TO_DYN,
    TYPE,
    UINT64_TO_DOUBLE,
    UINT64_TO_INT64,
    UINT64_TO_STRING,
    UINT64_TO_UINT64,
];

#[cfg(test)]
mod tests {
    use super::ALL;

    #[test]
    fn every_declared_standard_overload_has_its_constant_and_no_other() {
        let mut declared: Vec<String> = crate::stdlib::functions()
            .iter()
            .chain(crate::stdlib::optional_functions().iter())
            .chain([crate::stdlib::int_to_duration()].iter())
            .flat_map(|f| f.overloads.iter().map(|o| o.id.clone()))
            .collect();
        declared.sort();
        declared.dedup();
        let mut listed: Vec<&str> = ALL.to_vec();
        listed.sort_unstable();
        assert_eq!(declared, listed);
    }
}
