//! Image sizes, for reports of how many bytes an instance adds on top of its toolchain.

use crate::{DockerError, Engine};

impl Engine {
    /// The size of image `tag` in bytes (its own layers and its parents'), or None when the
    /// engine does not have it.
    pub async fn image_size(&self, tag: &str) -> Result<Option<u64>, DockerError> {
        match self.docker.inspect_image(tag).await {
            Ok(img) => Ok(img.size.map(|s| s.max(0) as u64)),
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(None),
            Err(e) => Err(DockerError::api("inspect image", tag)(e)),
        }
    }
}
