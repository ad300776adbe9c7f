//! Placeholder until the macro table lands.
/// Placeholder.
#[derive(Clone, Debug, Default)]
pub struct MacroTable;
impl MacroTable {
    /// Placeholder.
    pub fn standard() -> MacroTable { MacroTable }
}
