// The default VitePress theme with the site's few additions (operation badges, diagrams).
import DefaultTheme from 'vitepress/theme';
import './site.css';

export default DefaultTheme;
