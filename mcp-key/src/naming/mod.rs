//! Model-visible tool names: options, the namer and the table it returns.

mod distance;
mod namer;
mod options;
mod table;

pub use distance::edit_distance;
pub use namer::ToolNamer;
pub use options::{
    DEFAULT_MAX_TOOL_NAME_LEN, DEFAULT_TOOL_PREFIX, MIN_MAX_TOOL_NAME_LEN, NamingOptions,
};
pub use table::ToolNameTable;
