-- Benchmark data, loaded as the owner (landmark_owner) by bench/run.sh:
--   psql -v users=10000 -v notes=1000000 -v users2=1000 -v notes2=100000 -v places=2000 \
--        -v hash="$SCRYPT_HASH" -f bench/generate.sql
-- Notes cluster around the 50 real city centres of bench/cities.tsv: the city is
-- drawn skewed (index = floor(50 * random()^2), so the first, London, gets ~14%),
-- the offset is normal (Box-Muller, sigma 4 km). Bodies are 3-19 words drawn
-- Zipf-like from a word list (common: coffee, harbour, ..., lobster is mid-list),
-- plus rare words (axolotl ~0.05%, zeppelin ~0.2%). created_at spans a year.
-- Languages, as in a tenant used in many countries (issue 37): in 22 of the cities 80% of
-- the notes are in the local language (the rest in English), ~30% of all notes: French,
-- German, Spanish, Portuguese, Turkish and Swedish with their accents (café, Straße, mañana,
-- boğaz, smörgås), Japanese and Chinese without spaces between words, Korean with them,
-- ~7% of the notes in CJK. 河童 (kappa) is the rare two-character word, in ~1% of the
-- Japanese notes (~0.03% of all); 景色 (view) a common one.
-- Rows arrive in random spatial order and in created_at order, as real inserts do
-- (the service stamps created_at when it inserts, so the newest notes are the last
-- rows written). Before 2026-11-23 they arrived in random time order, which made
-- every newest-first walk read one heap page per note (bench/results/2026-11-23-search.md).
-- No lng is -180, so the antimeridian trigger (disabled during the load with the
-- event triggers) has nothing to do.
\set ON_ERROR_STOP 1
\timing on
BEGIN;
ALTER TABLE users DISABLE TRIGGER USER;
ALTER TABLE notes DISABLE TRIGGER USER;
ALTER TABLE places DISABLE TRIGGER USER;

CREATE TEMP TABLE bench_cities (name text, lat float8, lng float8, idx serial);
\copy bench_cities (name, lat, lng) FROM 'bench/cities.tsv'

CREATE FUNCTION pg_temp.bench_words() RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
SELECT ARRAY['the','coffee','great','view','here','best','good','food','nice','place',
 'park','walk','beer','harbour','lunch','market','sunset','bridge','street','art',
 'museum','music','quiet','busy','friendly','staff','cheap','expensive','breakfast','dinner',
 'cake','tea','wine','bar','river','beach','garden','church','tower','square',
 'pizza','noodles','sushi','tacos','burger','bakery','bookshop','cinema','gallery','lobster',
 'oysters','ramen','gelato','brunch','vegan','spicy','rooftop','terrace','ferry','tram',
 'station','library','fountain','statue','castle','palace','temple','mosque','cathedral','lighthouse',
 'vinyl','records','skatepark','mural','graffiti','jazz','karaoke','dumplings','croissant','espresso',
 'kombucha','falafel','ceviche','pierogi','haggis','bibimbap','laksa','pho','churros','baklava']
$$;

-- Each city's language, where it is not English.
CREATE TEMP TABLE bench_city_languages (name text PRIMARY KEY, lang text);
INSERT INTO bench_city_languages VALUES
 ('Paris','fr'),('Berlin','de'),('Vienna','de'),('Madrid','es'),('Barcelona','es'),('Mexico City','es'),
 ('Buenos Aires','es'),('Lima','es'),('Bogota','es'),('Santiago','es'),('Lisbon','pt'),('Sao Paulo','pt'),
 ('Istanbul','tr'),('Stockholm','sv'),('Oslo','sv'),('Copenhagen','sv'),('Tokyo','ja'),('Seoul','ko'),
 ('Beijing','zh'),('Shanghai','zh'),('Hong Kong','zh'),('Reykjavik','sv');

-- Words of the other languages, common first (drawn Zipf-like as the English ones).
CREATE FUNCTION pg_temp.bench_words(lang text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
SELECT CASE lang
 WHEN 'fr' THEN ARRAY['le','la','café','très','bon','vue','et','crème','brûlée','déjeuner','dîner','marché',
   'église','musée','château','plage','pâtisserie','boulangerie','rue','jardin','pont','soirée','été',
   'forêt','hôtel','théâtre','crêpe','fromage','bière','à','côté','où','près','fenêtre','élégant','goûter']
 WHEN 'de' THEN ARRAY['der','die','und','schön','Kaffee','Kuchen','Straße','Brücke','Bäckerei','Frühstück',
   'Biergarten','Fluss','Aussicht','gemütlich','günstig','Brötchen','Würstchen','Käse','Grüße','Spaß',
   'mit','am','im','Größe','Übersicht','Müller','Dönerladen','Gästehaus','Maß','Öffnungszeiten']
 WHEN 'es' THEN ARRAY['el','la','y','café','muy','bueno','playa','mañana','plaza','calle','mercado','museo',
   'vista','increíble','música','jamón','paella','rincón','pequeño','allí','aquí','también','niño',
   'señor','árbol','pingüino','corazón','canción','jardín','camión']
 WHEN 'pt' THEN ARRAY['o','a','e','café','muito','bom','praia','pão','coração','são','manhã','jardim','rua',
   'praça','ótimo','não','lindo','também','açaí','avó','ônibus','pastéis','feijão','limão','irmã']
 WHEN 'tr' THEN ARRAY['bir','ve','çok','güzel','çay','kahve','köprü','boğaz','şehir','ışık','deniz','balık',
   'simit','döner','iyi','manzara','sokak','ıslak','öğle','yemeği','kahvaltı','çarşı','İstanbul','dondurma']
 WHEN 'sv' THEN ARRAY['och','på','är','kaffe','fika','utsikt','mysig','hamn','sjö','smörgås','gård','bröd',
   'här','åka','kanelbulle','öl','ö','strömming','fjäll','ängen','väg','trädgård']
 WHEN 'ja' THEN ARRAY['の','が','で','は','景色','最高','カフェ','ラーメン','寿司','公園','駅','夜景','東京',
   'タワー','神社','お寺','桜','散歩','ランチ','綺麗','静か','人気','おすすめ','ビール','コーヒー','美味しい','商店街','温泉']
 WHEN 'ko' THEN ARRAY['정말','너무','맛집','카페','야경','서울','커피','공원','산책','최고','강추','분위기',
   '좋아요','한강','치킨','맥주','떡볶이','김밥','시장','역','예쁜','조용한','사람','많아요','전망대']
 WHEN 'zh' THEN ARRAY['的','了','很','好吃','风景','咖啡','公园','夜景','美食','小笼包','火锅','地铁','推荐',
   '非常','漂亮','安静','人多','外滩','故宫','在','和','茶馆','胡同','奶茶','早餐']
 ELSE pg_temp.bench_words() END
$$;

CREATE FUNCTION pg_temp.bench_users(p_tenant bigint, p_count int, p_hash text) RETURNS void LANGUAGE sql AS $$
INSERT INTO users (tenant_id, username, email, password_hash, created_at)
SELECT p_tenant,
       (ARRAY['kim','lee','alex','sam','maria','john','ana','li','wei','omar','fatima','noah','emma','lucas','mia','yuki','raj','sofia','ivan','chen'])[1 + g % 20] || '.' || g,
       NULL, p_hash, now() - interval '400 days' + random() * interval '30 days'
FROM generate_series(1, p_count) g
$$;

CREATE FUNCTION pg_temp.bench_notes(p_tenant bigint, p_count int) RETURNS void LANGUAGE sql AS $$
INSERT INTO notes (tenant_id, user_id, body, location, visibility, created_at, updated_at)
SELECT p_tenant,
       u.ids[1 + floor(random() * array_length(u.ids, 1))::int],
       CASE WHEN char_length(b.body) < 20 AND l.lang NOT IN ('ja', 'zh') THEN b.body || ' by the old harbour' ELSE rtrim(left(b.body, 140)) END,
       ST_SetSRID(ST_MakePoint(
           c.lng + s.r * sin(s.th) / (111.32 * cos(radians(c.lat))),
           c.lat + s.r * cos(s.th) / 111.32), 4326)::geography,
       CASE WHEN s.vis < 0.1 THEN 'private' ELSE 'public' END,
       s.ts, s.ts
FROM (SELECT g, floor(50 * power(random(), 2))::int + 1 AS ci,
             sqrt(-2 * ln(1 - random())) * 4.0 AS r, 2 * pi() * random() AS th,
             -- One note every 365 days / p_count, the newest last: rows go in in time order.
             now() - (p_count - g) * (interval '365 days' / p_count) AS ts, random() AS vis, random() AS rare,
             random() AS local
      FROM generate_series(1, p_count) g) s
JOIN bench_cities c ON c.idx = s.ci
CROSS JOIN LATERAL (SELECT CASE WHEN s.local < 0.8 THEN coalesce((SELECT l.lang FROM bench_city_languages l WHERE l.name = c.name), 'en')
                                ELSE 'en' END AS lang) l
CROSS JOIN (SELECT array_agg(id) AS ids FROM users WHERE tenant_id = p_tenant) u
CROSS JOIN LATERAL (
    -- Japanese and Chinese are written without spaces; a Japanese word is 1-4 characters.
    SELECT string_agg(w[1 + floor(cardinality(w) * power(random(), 2.5))::int], CASE WHEN l.lang IN ('ja', 'zh') THEN '' ELSE ' ' END)
           || CASE WHEN l.lang = 'ja' AND s.rare < 0.01 THEN '河童' ELSE '' END
           || CASE WHEN s.rare < 0.0005 THEN ' axolotl' WHEN s.rare < 0.0025 THEN ' zeppelin' ELSE '' END AS body
    FROM generate_series(1, CASE WHEN l.lang IN ('ja', 'zh') THEN 4 + s.g % 12 ELSE 3 + s.g % 17 END) k, pg_temp.bench_words(l.lang) w) b
$$;

SELECT pg_temp.bench_users(id, :users, :'hash') FROM tenants WHERE slug = 'bench';
SELECT pg_temp.bench_users(id, :users2, :'hash') FROM tenants WHERE slug = 'bench2';
-- The notes' GIN indexes (notes_search: hour and cell keys, trigrams and bigrams, about 60
-- entries a note) are dropped for the load and built again after it, as their migrations
-- define them (read from the catalog, not written twice): maintained row by row, 10M notes
-- had not loaded after 34 minutes (session 22); a GIN build sorts its entries in memory.
SELECT string_agg(format('DROP INDEX %I', indexname), '; ') AS drop_gin,
       string_agg(indexdef, '; ') AS create_gin
FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'notes' AND indexdef LIKE '% USING gin %' \gset
:drop_gin;
SELECT pg_temp.bench_notes(id, :notes) FROM tenants WHERE slug = 'bench';
SELECT pg_temp.bench_notes(id, :notes2) FROM tenants WHERE slug = 'bench2';
SET maintenance_work_mem = '1GB';
:create_gin;
RESET maintenance_work_mem;

INSERT INTO places (tenant_id, name, location, kind, import_key)
SELECT t.id, initcap((pg_temp.bench_words())[1 + g % 90]) || ' ' || c.name || ' ' || g,
       ST_SetSRID(ST_MakePoint(c.lng + (random() - 0.5) * 0.1, c.lat + (random() - 0.5) * 0.1), 4326)::geography,
       'default', 'bench-' || g
FROM generate_series(1, :places) g
JOIN bench_cities c ON c.idx = 1 + g % 50
CROSS JOIN tenants t WHERE t.slug = 'bench';

ALTER TABLE users ENABLE TRIGGER USER;
ALTER TABLE notes ENABLE TRIGGER USER;
ALTER TABLE places ENABLE TRIGGER USER;
COMMIT;
VACUUM ANALYZE users;
VACUUM ANALYZE notes;
VACUUM ANALYZE places;
