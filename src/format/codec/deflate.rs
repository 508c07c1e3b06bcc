//! Raw deflate through C zlib, for the gzip writer only.
//!
//! The JDK's `Deflater` is zlib, and zlib's match finder decides the compressed bytes: only zlib
//! itself reproduces them. flate2 compiles exactly one backend, and its C-zlib backend inflates
//! markedly slower than zlib-rs, which therefore keeps decoding; this module is the small
//! binding the writer needs beside it.

use std::os::raw::{c_int, c_uint};
use std::ptr;

use libz_sys as z;

/// zlib's `windowBits` for a raw stream (no zlib header) with the 32 KiB window, as the JDK's
/// `Deflater(level, nowrap = true)` asks for.
const RAW_WINDOW_BITS: c_int = -15;
/// zlib's default memory level, the JDK's too.
const MEM_LEVEL: c_int = 8;
/// Output room made per step when a bound is exceeded (never in practice: see `deflateBound`).
const GROW_BYTES: usize = 64 * 1024;

unsafe extern "C" fn zalloc(_opaque: z::voidpf, items: z::uInt, size: z::uInt) -> z::voidpf {
    // SAFETY: calloc accepts any counts (it checks their product for overflow).
    unsafe { libc::calloc(items as usize, size as usize) }
}

unsafe extern "C" fn zfree(_opaque: z::voidpf, address: z::voidpf) {
    // SAFETY: zlib frees only what `zalloc` returned.
    unsafe { libc::free(address) }
}

/// One zlib deflate stream, reset for every input.
pub(super) struct Deflater {
    // Boxed: zlib's state points back at the stream, which therefore must not move.
    stream: Box<z::z_stream>,
    level: c_int,
}

impl Deflater {
    /// A raw deflate stream at zlib `level` (-1 = zlib's default, 6), default strategy.
    pub(super) fn new(level: i32) -> Result<Self, String> {
        let mut stream = Box::new(z::z_stream {
            next_in: ptr::null_mut(),
            avail_in: 0,
            total_in: 0,
            next_out: ptr::null_mut(),
            avail_out: 0,
            total_out: 0,
            msg: ptr::null_mut(),
            state: ptr::null_mut(),
            zalloc,
            zfree,
            opaque: ptr::null_mut(),
            data_type: 0,
            adler: 0,
            reserved: 0,
        });
        // SAFETY: `stream` is initialised and heap-pinned; the version and size let zlib check
        // that it was compiled with this struct layout.
        let rc = unsafe {
            z::deflateInit2_(
                &mut *stream,
                level,
                z::Z_DEFLATED,
                RAW_WINDOW_BITS,
                MEM_LEVEL,
                z::Z_DEFAULT_STRATEGY,
                z::zlibVersion(),
                std::mem::size_of::<z::z_stream>() as c_int,
            )
        };
        if rc != z::Z_OK {
            return Err(format!("deflateInit2 failed ({rc})"));
        }
        Ok(Deflater { stream, level })
    }

    pub(super) fn level(&self) -> i32 {
        self.level
    }

    /// Starts a new raw deflate stream (the level stays).
    pub(super) fn reset(&mut self) -> Result<(), String> {
        // SAFETY: the stream was initialised by deflateInit2_ and is ended only by drop.
        let rc = unsafe { z::deflateReset(&mut *self.stream) };
        if rc != z::Z_OK {
            return Err(format!("deflateReset failed ({rc})"));
        }
        Ok(())
    }

    /// Feeds `input` to the stream, appending what zlib emits to `out`; `finish` ends the stream
    /// after it. Without a flush, zlib holds input back until it has its full lookahead, so how
    /// the input is cut into calls never changes the bytes (only `finish` does).
    pub(super) fn feed(
        &mut self,
        input: &[u8],
        finish: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if input.is_empty() && !finish {
            return Ok(());
        }
        let stream = &mut *self.stream;
        // SAFETY: the stream is initialised; deflateBound only reads its parameters.
        let bound = unsafe { z::deflateBound(stream, input.len() as z::uLong) } as usize;
        let mut consumed = 0;
        let mut room = bound;
        loop {
            // zlib counts in c_uint: a larger input is fed in pieces (see above).
            let piece = (input.len() - consumed).min(c_uint::MAX as usize);
            let last = consumed + piece == input.len();
            let start = out.len();
            let room_now = room.clamp(1, c_uint::MAX as usize);
            out.resize(start + room_now, 0);
            // zlib never writes through next_in; the pointers are cleared again below.
            stream.next_in = input[consumed..].as_ptr().cast_mut();
            stream.avail_in = piece as c_uint;
            stream.next_out = out[start..].as_mut_ptr();
            stream.avail_out = room_now as c_uint;
            let flush = if last && finish {
                z::Z_FINISH
            } else {
                z::Z_NO_FLUSH
            };
            // SAFETY: next_in/next_out point into live buffers of at least avail_in/avail_out
            // bytes for the duration of the call.
            let rc = unsafe { z::deflate(stream, flush) };
            let room_left = stream.avail_out as usize;
            out.truncate(start + room_now - room_left);
            consumed += piece - stream.avail_in as usize;
            stream.next_in = ptr::null_mut();
            stream.next_out = ptr::null_mut();
            match rc {
                z::Z_STREAM_END => return Ok(()),
                // All input taken and output room to spare: zlib has nothing more to say yet.
                z::Z_OK | z::Z_BUF_ERROR if !finish && consumed == input.len() && room_left > 0 => {
                    return Ok(())
                }
                // Z_BUF_ERROR: the output was full; more room follows.
                z::Z_OK | z::Z_BUF_ERROR => room = GROW_BYTES,
                rc => return Err(format!("deflate failed ({rc})")),
            }
        }
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: the stream was initialised by deflateInit2_ and is ended exactly once.
        unsafe { z::deflateEnd(&mut *self.stream) };
    }
}
