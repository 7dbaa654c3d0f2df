//! No import cycle between the source files of `collector/src`, a parent module and its
//! children included (tests/layers.rs checks the layers and the siblings of a folder;
//! what counts as an import: evaluator/tests/support/imports.rs).

#[path = "../../evaluator/tests/support/imports.rs"]
mod imports;

#[test]
fn no_import_cycle_between_source_files() {
    imports::assert_no_cycle("collector");
}
