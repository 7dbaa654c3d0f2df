//! No import cycle between the source files of `schema/src` (what counts as an import:
//! evaluator/tests/support/imports.rs).

#[path = "../../evaluator/tests/support/imports.rs"]
mod imports;

#[test]
fn no_import_cycle_between_source_files() {
    imports::assert_no_cycle("schema");
}
