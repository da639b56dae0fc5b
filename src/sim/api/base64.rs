//! Base64 as Go's `encoding/base64` writes it: the standard alphabet with padding (how JSON
//! carries a Secret's `[]byte` values) and the URL-safe one without (share links).

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        if pad {
            for _ in chunk.len()..3 {
                out.push('=');
            }
        }
    }
    out
}

/// `base64.StdEncoding`: `+/` and `=` padding (RFC 4648 §4).
pub fn encode_std(bytes: &[u8]) -> String {
    encode(bytes, STD, true)
}

/// `base64.RawURLEncoding`: `-_`, no padding (RFC 4648 §5).
pub fn encode_url(bytes: &[u8]) -> String {
    encode(bytes, URL, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_alphabets_encode_the_rfc_4648_test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, want) in cases {
            assert_eq!(encode_std(plain.as_bytes()), want);
            assert_eq!(encode_url(plain.as_bytes()), want.trim_end_matches('='));
        }
        assert_eq!(encode_std(&[0xfb, 0xff]), "+/8=");
        assert_eq!(encode_url(&[0xfb, 0xff]), "-_8");
    }
}
