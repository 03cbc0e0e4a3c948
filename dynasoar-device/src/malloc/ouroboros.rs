//! PLACEHOLDER (not implemented yet): every request fails. Replaced by the real allocator.

super::placeholder!(PageStatic, OuroPageStatic);
super::placeholder!(PageArray, OuroPageArray);
super::placeholder!(PageLinked, OuroPageLinked);
super::placeholder!(ChunkStatic, OuroChunkStatic);
super::placeholder!(ChunkArray, OuroChunkArray);
super::placeholder!(ChunkLinked, OuroChunkLinked);
