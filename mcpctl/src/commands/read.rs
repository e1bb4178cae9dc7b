//! `mcpctl read KEY URI`: read one resource of one server.

use crate::cli::{GlobalArgs, ReadArgs};
use crate::error::CliError;
use crate::host::session::Session;

/// Runs `read`.
pub(crate) async fn run(
    session: &mut Session,
    global: &GlobalArgs,
    args: &ReadArgs,
) -> Result<u8, CliError> {
    let key = session.server_key(&args.server)?;
    let result = session
        .set
        .read_resource(&key, &args.uri)
        .await
        .map_err(|e| session.error(e))?;
    let wire = serde_json::to_value(&result)
        .map_err(|e| CliError::failure(format!("cannot encode the resource as JSON: {e}")))?;
    if global.json {
        crate::term::render::out_json(&wire);
    } else {
        crate::term::render::out(&crate::term::render::resource_contents(&wire));
    }
    Ok(0)
}
