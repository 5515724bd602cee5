//! Image sizes, for reports of how many bytes an instance adds on top of its environment and its
//! toolchain: bytes on disk (the engine's sizes), and each layer's bytes as a transfer carries
//! them, uncompressed (`docker save`) and gzip-compressed (what a registry push uploads).

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, Write};

use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use crate::{DockerError, Engine};

/// One layer as it travels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LayerSize {
    /// Bytes of its uncompressed tar (as `docker save` exports it; its sha256 is the diff id).
    pub bytes: u64,
    /// Bytes of that tar gzip-compressed at the default level, as a registry push compresses it.
    pub gzip_bytes: u64,
}

impl Engine {
    /// The size of image `tag` in bytes (its own layers and its parents') and the diff ids
    /// (`sha256:…`) of its layers, bottom first; None when the engine does not have it (or
    /// gives no size).
    async fn size_and_layers(&self, tag: &str) -> Result<Option<(u64, Vec<String>)>, DockerError> {
        match self.docker.inspect_image(tag).await {
            Ok(img) => Ok(img.size.map(|s| (s.max(0) as u64, img.root_fs.and_then(|r| r.layers).unwrap_or_default()))),
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(None),
            Err(e) => Err(DockerError::api("inspect image", tag)(e)),
        }
    }

    /// The transfer sizes of the layers each `(image, below)` pair's image adds on top of the image
    /// it was built on (what [`Engine::added`] sums), by diff id, from one `docker save` of the
    /// images: every layer is read once and hashed (its diff id), and only those an image adds
    /// are gzip-compressed to count their bytes (the others, a toolchain's hundreds of MiB among
    /// them, are hashed, never compressed). A pair whose images the engine lacks adds nothing;
    /// nothing is kept but the counts.
    pub async fn layer_sizes(&self, pairs: &[(String, String)]) -> Result<HashMap<String, LayerSize>, DockerError> {
        let mut wanted = HashSet::new();
        let mut images = Vec::new();
        for (image, below) in pairs {
            if let (Some((_, layers)), Some((_, theirs))) =
                (self.size_and_layers(image).await?, self.size_and_layers(below).await?)
            {
                wanted.extend(layers.get(theirs.len()..).unwrap_or_default().iter().cloned());
                images.push(image.as_str());
            }
        }
        images.sort_unstable();
        images.dedup();
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let what = images.join(" ");
        let mut stream = self.docker.export_images(&images);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(16);
        let reader =
            tokio::task::spawn_blocking(move || sizes_of_save(ChannelReader { rx, chunk: Vec::new(), at: 0 }, &wanted));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(DockerError::api("save images", &what))?;
            if tx.send(chunk.to_vec()).is_err() {
                break;
            }
        }
        drop(tx);
        reader
            .await
            .map_err(|e| DockerError::io("reading saved images")(std::io::Error::other(e.to_string())))?
            .map_err(DockerError::io(format!("reading the archive of {what}")))
    }
}

/// What an image adds on top of an image it was built from (an instance over its environment, an
/// environment over its toolchain): bytes on disk, and the layers it has beyond the other's with
/// their bytes as a transfer carries them. The one place this arithmetic is done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    /// Its size less the other's, on disk.
    pub disk: u64,
    /// How many layers it has beyond the other's.
    pub layers: usize,
    /// Those layers' bytes, uncompressed tar.
    pub tar: u64,
    /// Those layers' bytes, gzip-compressed.
    pub gzip: u64,
}

impl Added {
    /// From the two images' sizes and layers (bottom first; `below`'s are the first of `image`'s)
    /// and the layers' transfer sizes (a layer missing from `sizes` counts as empty).
    pub fn of(
        size: u64,
        below_size: u64,
        layers: &[String],
        below: &[String],
        sizes: &HashMap<String, LayerSize>,
    ) -> Added {
        let mine = layers.get(below.len()..).unwrap_or_default();
        let (mut tar, mut gzip) = (0, 0);
        for l in mine {
            let size = sizes.get(l).copied().unwrap_or_default();
            tar += size.bytes;
            gzip += size.gzip_bytes;
        }
        Added { disk: size.saturating_sub(below_size), layers: mine.len(), tar, gzip }
    }
}

impl Added {
    /// This image's bytes with its share of `below`'s (what its environment adds, shared by
    /// `n` instances): `below`'s bytes divided by `n`, its own layers only.
    pub fn with_share(self, below: Added, n: u64) -> Added {
        let n = n.max(1);
        Added {
            disk: self.disk + below.disk / n,
            layers: self.layers,
            tar: self.tar + below.tar / n,
            gzip: self.gzip + below.gzip / n,
        }
    }
}

/// An instance image and the images it was built on: its repository environment (none for
/// records made before environments) and its toolchain image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageStack<'a> {
    /// The instance image.
    pub instance: &'a str,
    /// Its repository environment image, if it has one.
    pub environment: Option<&'a str>,
    /// Its toolchain image.
    pub toolchain: &'a str,
}

impl<'a> ImageStack<'a> {
    /// From the tags a record keeps: an empty environment tag is none.
    pub fn new(instance: &'a str, environment: &'a str, toolchain: &'a str) -> ImageStack<'a> {
        ImageStack { instance, environment: (!environment.is_empty()).then_some(environment), toolchain }
    }

    /// The image the instance image was built on, whose bytes it adds to: its environment,
    /// else its toolchain.
    pub fn parent(&self) -> &'a str {
        self.environment.unwrap_or(self.toolchain)
    }
}

impl Engine {
    /// What image `image` adds on top of image `below` ([`Added`]), the layers' transfer sizes
    /// taken from `sizes` (from [`Engine::layer_sizes`]; empty when only bytes on disk matter);
    /// None when the engine lacks either image.
    pub async fn added(
        &self,
        image: &str,
        below: &str,
        sizes: &HashMap<String, LayerSize>,
    ) -> Result<Option<Added>, DockerError> {
        let (Some((size, layers)), Some((under, theirs))) =
            (self.size_and_layers(image).await?, self.size_and_layers(below).await?)
        else {
            return Ok(None);
        };
        Ok(Some(Added::of(size, under, &layers, &theirs, sizes)))
    }
}

/// Bytes from the save stream, handed over by the async side.
struct ChannelReader {
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.rx.recv() {
                Ok(next) => {
                    self.chunk = next;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Counts bytes written, keeps none.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The layers of a `docker save` archive that are in `wanted` (each file holding a layer:
/// `<id>/layer.tar`, or a blob of the OCI layout newer engines write), by the sha256 of their
/// bytes. A layer's diff id is known only once it is read: it is hashed while spooled to an
/// unnamed temporary file, and compressed from there when wanted.
fn sizes_of_save(reader: impl Read, wanted: &HashSet<String>) -> std::io::Result<HashMap<String, LayerSize>> {
    let mut out = HashMap::new();
    let mut archive = tar::Archive::new(reader);
    let mut buf = vec![0u8; 1 << 20];
    let mut spool = tempfile::tempfile()?;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.to_string_lossy().into_owned();
        let layer = path.ends_with("/layer.tar") || path.starts_with("blobs/sha256/");
        if entry.header().entry_type() != tar::EntryType::Regular || !layer {
            continue;
        }
        spool.set_len(0)?;
        spool.rewind()?;
        let mut hash = Sha256::new();
        let mut bytes = 0u64;
        loop {
            let n = entry.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hash.update(&buf[..n]);
            spool.write_all(&buf[..n])?;
            bytes += n as u64;
        }
        let id = format!("sha256:{}", crate::base::hex(&hash.finalize()));
        if !wanted.contains(&id) || out.contains_key(&id) {
            continue;
        }
        spool.rewind()?;
        let mut gzip = flate2::write::GzEncoder::new(Counter(0), flate2::Compression::default());
        std::io::copy(&mut (&spool).take(bytes), &mut gzip)?;
        out.insert(id, LayerSize { bytes, gzip_bytes: gzip.finish()?.0 });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{Added, ImageStack, LayerSize, sizes_of_save};
    use sha2::{Digest, Sha256};

    #[test]
    fn the_wanted_layers_of_a_save_archive_are_found_by_their_digest_and_compressed() {
        let layer = b"hello layer ".repeat(1000);
        // A larger layer first (the spool is truncated between layers), not wanted.
        let base = b"base layer bytes, not compressed ".repeat(4000);
        let mut tar = tar::Builder::new(Vec::new());
        for (path, content) in [
            ("abc/VERSION", b"1.0".as_slice()),
            ("aaa/layer.tar", &base),
            ("abc/layer.tar", &layer),
            ("manifest.json", b"[]"),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_size(content.len() as u64);
            tar.append_data(&mut h, path, content).unwrap();
        }
        let id = format!("sha256:{}", crate::base::hex(&Sha256::digest(&layer)));
        let wanted = [id.clone(), "sha256:0000".to_owned()].into_iter().collect();
        let sizes = sizes_of_save(tar.into_inner().unwrap().as_slice(), &wanted).unwrap();
        assert_eq!(sizes.keys().collect::<Vec<_>>(), [&id]);
        let LayerSize { bytes, gzip_bytes } = sizes[&id];
        assert_eq!(bytes, 12_000);
        // The layer's own bytes compressed: 12,000 bytes of one repeated phrase, not the base's.
        let alone = {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut gz, &layer).unwrap();
            gz.finish().unwrap().len() as u64
        };
        assert_eq!(gzip_bytes, alone);
    }

    #[test]
    fn an_image_adds_the_layers_beyond_those_it_was_built_from() {
        let l = |s: &str| s.to_owned();
        let sizes =
            [(l("a"), LayerSize { bytes: 100, gzip_bytes: 10 }), (l("b"), LayerSize { bytes: 7, gzip_bytes: 3 })]
                .into_iter()
                .collect();
        let added = Added::of(500, 200, &[l("a"), l("b"), l("c")], &[l("a")], &sizes);
        assert_eq!(added, Added { disk: 300, layers: 2, tar: 7, gzip: 3 });
        // A smaller image on top (a size the engine rounds) adds nothing rather than wrapping.
        assert_eq!(Added::of(1, 2, &[l("a")], &[l("a"), l("b")], &sizes), Added::default());
    }

    #[test]
    fn an_instance_image_is_built_on_its_environment_else_its_toolchain() {
        let stack = ImageStack::new("inst", "env", "tool");
        assert_eq!((stack.environment, stack.parent()), (Some("env"), "env"));
        let old = ImageStack::new("inst", "", "tool");
        assert_eq!((old.environment, old.parent()), (None, "tool"));
    }

    #[test]
    fn an_instance_takes_its_share_of_its_environment() {
        let own = Added { disk: 10, layers: 2, tar: 20, gzip: 5 };
        let env = Added { disk: 300, layers: 7, tar: 90, gzip: 31 };
        assert_eq!(own.with_share(env, 3), Added { disk: 110, layers: 2, tar: 50, gzip: 15 });
    }
}
