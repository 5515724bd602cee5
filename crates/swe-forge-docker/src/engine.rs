//! Connecting to the engine and small image queries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bollard::Docker;
use bollard::query_parameters::ListImagesOptions;

use crate::DockerError;

/// A connected Docker engine.
#[derive(Clone)]
pub struct Engine {
    pub(crate) docker: Docker,
    host: String,
    api_version: String,
    /// What the clones of this engine share: state kept between runs.
    pub(crate) shared: Arc<Shared>,
}

/// State the clones of an [`Engine`] share.
#[derive(Default)]
pub(crate) struct Shared {
    /// Id of the internal network test runs are attached to, once found or made.
    pub(crate) isolated_network: Mutex<Option<String>>,
    /// Removals of finished runs' containers still under way ([`Engine::settle`] waits for them).
    pub(crate) removals: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Containers started ahead of the runs that will use them (`warm.rs`).
    pub(crate) warm: Mutex<Vec<crate::warm::Warm>>,
    /// Runs start their own containers (`Engine::set_prestart(false)`).
    pub(crate) no_prestart: std::sync::atomic::AtomicBool,
}

impl Engine {
    /// Connects to `DOCKER_HOST` (or the local socket), negotiates the API version and pings.
    /// One clear error, saying how to start an engine, when none answers.
    pub async fn connect() -> Result<Engine, DockerError> {
        match std::env::var("DOCKER_HOST") {
            Ok(host) => Engine::connect_to(&host).await,
            Err(_) => Engine::connect_to("unix:///var/run/docker.sock").await,
        }
    }

    /// Connects to the engine at `host`: `unix:///path/to/socket`, a bare socket path, or
    /// `tcp://HOST:PORT` (plain HTTP), negotiates the API version and pings.
    pub async fn connect_to(host: &str) -> Result<Engine, DockerError> {
        let host = host.to_owned();
        let unreachable = |source| DockerError::Unreachable { host: host.clone(), source };
        // Builds of large contexts and long test runs: the per-request timeout is only a backstop,
        // phases enforce their own timeouts.
        let timeout = 6 * 3600;
        let docker = if host.starts_with("tcp://") || host.starts_with("http://") {
            Docker::connect_with_http(&host, timeout, bollard::API_DEFAULT_VERSION)
        } else {
            let path = host.strip_prefix("unix://").unwrap_or(&host);
            Docker::connect_with_unix(path, timeout, bollard::API_DEFAULT_VERSION)
        }
        .map_err(unreachable)?
        .with_timeout(Duration::from_secs(timeout));
        let docker = docker.negotiate_version().await.map_err(unreachable)?;
        docker.ping().await.map_err(unreachable)?;
        let version = docker.version().await.map_err(unreachable)?;
        let api_version = version.api_version.unwrap_or_default();
        tracing::debug!(%host, %api_version, "connected to the Docker engine");
        Ok(Engine { docker, host, api_version, shared: Arc::default() })
    }

    /// The address connected to.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The API version the engine speaks.
    pub fn api_version(&self) -> &str {
        &self.api_version
    }

    /// The image id of `tag`, or None when the engine does not have it.
    pub async fn image_id(&self, tag: &str) -> Result<Option<String>, DockerError> {
        match self.docker.inspect_image(tag).await {
            Ok(img) => Ok(img.id),
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(None),
            Err(e) => Err(DockerError::api("inspect image", tag)(e)),
        }
    }

    /// Tags of images carrying every `label=value` given, newest first.
    pub async fn images_with_labels(&self, labels: &[(&str, &str)]) -> Result<Vec<String>, DockerError> {
        Ok(self.listed_images(labels).await?.into_iter().map(|i| i.tag).collect())
    }

    /// The images carrying every label of `labels`, newest first: one entry per tag, with the
    /// image's id, size and labels.
    pub async fn listed_images(&self, labels: &[(&str, &str)]) -> Result<Vec<ListedImage>, DockerError> {
        let filters: HashMap<String, Vec<String>> =
            HashMap::from([("label".to_owned(), labels.iter().map(|(k, v)| format!("{k}={v}")).collect())]);
        let mut images = self
            .docker
            .list_images(Some(ListImagesOptions { filters: Some(filters), ..Default::default() }))
            .await
            .map_err(DockerError::api("list images", "label filter"))?;
        images.sort_by_key(|i| std::cmp::Reverse(i.created));
        Ok(images
            .into_iter()
            .flat_map(|i| {
                let (id, size, labels) = (i.id, i.size, i.labels);
                i.repo_tags.into_iter().filter(|t| t != "<none>:<none>").map(move |tag| ListedImage {
                    tag,
                    id: id.clone(),
                    size: u64::try_from(size).unwrap_or(0),
                    labels: labels.clone(),
                })
            })
            .collect())
    }

    /// Entrypoint, command and environment of an image's configuration.
    pub async fn image_config(&self, tag: &str) -> Result<(Vec<String>, Vec<String>, Vec<String>), DockerError> {
        let img = self.docker.inspect_image(tag).await.map_err(DockerError::api("inspect image", tag))?;
        let c = img.config.unwrap_or_default();
        Ok((c.entrypoint.unwrap_or_default(), c.cmd.unwrap_or_default(), c.env.unwrap_or_default()))
    }

    /// Removes an image (used by tests and cleanup); a missing image is not an error.
    pub async fn remove_image(&self, tag: &str) -> Result<(), DockerError> {
        let opts = bollard::query_parameters::RemoveImageOptions { force: true, ..Default::default() };
        match self.docker.remove_image(tag, Some(opts), None).await {
            Ok(_) | Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(()),
            Err(e) => Err(DockerError::api("remove image", tag)(e)),
        }
    }
}

/// An image [`Engine::listed_images`] found, by one of its tags.
#[derive(Debug, Clone)]
pub struct ListedImage {
    /// `name:tag`.
    pub tag: String,
    /// `sha256:...`.
    pub id: String,
    /// Bytes, its parent layers included.
    pub size: u64,
    /// Its labels (role, repository, ...).
    pub labels: HashMap<String, String>,
}
